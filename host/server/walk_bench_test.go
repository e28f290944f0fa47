package server

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/host"
)

// A 20-chunk request of about 10 KB (the size of bench/load's DL19
// requests) and the native core's decision for it, for the server's own
// per-request reading: the fast walk against the reference readers.
func bigRequestAndDecision(b *testing.B) (req, dec []byte) {
	var r struct {
		Query  string           `json:"query"`
		Chunks []map[string]any `json:"chunks"`
	}
	if err := json.Unmarshal(request(b, "default", "inject"), &r); err != nil {
		b.Fatal(err)
	}
	base := r.Chunks
	r.Chunks = nil
	for i := range 20 {
		c := map[string]any{}
		for k, v := range base[i%len(base)] {
			c[k] = v
		}
		c["id"] = "c" + strconv.Itoa(i)
		c["text"] = strings.Repeat(c["text"].(string)+" ", 3)
		r.Chunks = append(r.Chunks, c)
	}
	req, _ = json.Marshal(r)
	n, err := host.NewNative(nil)
	if err != nil {
		b.Fatal(err)
	}
	if dec, err = n.Evaluate(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	return req, dec
}

func BenchmarkReadDecision(b *testing.B) {
	_, dec := bigRequestAndDecision(b)
	for name, read := range map[string]func([]byte, bool) (*decisionView, error){"walk": readDecision, "ref": readDecisionRef} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(dec)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := read(dec, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRequestQuery(b *testing.B) {
	req, _ := bigRequestAndDecision(b)
	for name, read := range map[string]func([]byte) (string, []byte){"walk": requestQuery, "ref": requestQueryRef} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(req)))
			b.ReportAllocs()
			for b.Loop() {
				if q, _ := read(req); q == "" {
					b.Fatal("no query")
				}
			}
		})
	}
}
