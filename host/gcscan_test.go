package host

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/gate"
)

// Requests with many strings or numbers used to take seconds in the TinyGo
// module (docs/security.md, "Known issues", now fixed): the parsed tree held
// every string and raw number as a view into the input buffer, and TinyGo's
// collector marks an interior pointer by walking from it to the end of its
// object (runtime.findHead), so each collection cost about pointers x
// buffer size: 10 chunks of 1536-dim embeddings took 0.6-9 s against 2 ms
// natively, 32k strings in chunk metadata 5 s. The parse tree now holds
// offsets (gate/jsonx/doc.go) and the engine reuses it between calls.
//
// Each request here must decide on a fresh instance within the default 1 s
// deadline (measured: 20-60 ms), and again on the warm instance.
func TestLargeJSONWithinDeadline(t *testing.T) {
	ctx := context.Background()
	for name, body := range map[string][]byte{
		"1536-dim embeddings x 10": embeddingRequest(1536, 10),
		"3072-dim embeddings x 10": embeddingRequest(3072, 10),
		"32k numbers in metadata":  []byte(`{"query":"q","chunks":[{"metadata":[` + strings.Repeat("0,", 1<<15) + `0]}]}`),
		"32k strings in metadata":  []byte(`{"query":"q","chunks":[{"metadata":[` + strings.Repeat(`"a",`, 1<<15) + `"a"]}]}`),
	} {
		t.Run(name, func(t *testing.T) {
			g := newRealGate(t, ModuleTinyGo, Options{PoolSize: 1}) // default 1 s deadline
			for _, call := range []string{"fresh", "warm"} {
				start := time.Now()
				if _, err := g.Evaluate(ctx, body); err != nil {
					t.Fatalf("%s instance, %d bytes: %v after %v", call, len(body), firstLine(err), time.Since(start))
				}
				t.Logf("%s instance, %d bytes: %v", call, len(body), time.Since(start))
			}
		})
	}
	// Just under the default max_request_bytes, half a million zeros: a
	// limit error (the value budget, 132 Ki values) in every build. This case is about
	// the answer, not the collector: the module parses 132 Ki values
	// before it can say no, so it gets a longer deadline
	// (host/adversarial_test.go times it). The TinyGo module used to time
	// out here, and the standard-Go module ran out of memory.
	under := []byte(`{"query":"q","query_embedding":[` + strings.Repeat("0,", (gate.DefaultLimits().MaxRequestBytes-64)/2) + `0]}`)
	for _, m := range realModules {
		t.Run("4 MiB of zeros/"+m.String(), func(t *testing.T) {
			g := newRealGate(t, m, Options{PoolSize: 1, Timeout: 10 * time.Second})
			start := time.Now()
			_, err := g.Evaluate(ctx, under)
			var ge *GateError
			if !errors.As(err, &ge) || ge.Code != "limit" {
				t.Fatalf("%d bytes: %v, want a limit error", len(under), firstLine(err))
			}
			t.Logf("%d bytes: limit error in %v", len(under), time.Since(start))
		})
	}
}

// embeddingRequest is a real-shaped request: a query embedding and n chunks
// with embeddings of dims dimensions, six decimals each.
func embeddingRequest(dims, n int) []byte {
	emb := func(b []byte, seed int) []byte {
		b = append(b, '[')
		for i := range dims {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, float64((i*7+seed)%97)/97-0.5, 'f', 6, 64)
		}
		return append(b, ']')
	}
	b := []byte(`{"query":"how do I rotate the signing key","query_embedding":`)
	b = emb(b, 0)
	b = append(b, `,"chunks":[`...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":"c`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `","text":"rotate the signing key by publishing a new key","scores":{"vector":0.7},"embedding":`...)
		b = emb(b, i+1)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}
