package host

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Known issue (docs/security.md, "TinyGo GC and interior pointers"): the
// parsed JSON tree and the decoded request hold strings and raw number texts
// as views into one large input buffer. TinyGo's collector finds the head of
// the object an interior pointer points into by walking back over the heap's
// block states, so one collection costs about (pointers x offset / 64 bytes),
// quadratic in the request size, and a fresh instance collects several times
// while its heap grows. Measured on the TinyGo module: 10 chunks with
// 1536-dim embeddings (161 KB) take 4-9 s on a fresh instance against 2 ms
// natively; 32k numbers in chunk metadata (33 KB) take 2-3 s. Both pass the
// byte limits, so one small request holds an instance for its whole deadline.
//
// These are the requests that must decide within the default 1 s deadline
// once the codec keeps no interior pointers. Set CTXGATE_KNOWN_ISSUES=1 to run
// them before then.
func TestLargeJSONWithinDeadline(t *testing.T) {
	if os.Getenv("CTXGATE_KNOWN_ISSUES") == "" {
		t.Skip("known issue: quadratic TinyGo GC scan of interior pointers (docs/security.md); CTXGATE_KNOWN_ISSUES=1 runs it")
	}
	ctx := context.Background()
	for name, body := range map[string][]byte{
		"1536-dim embeddings x 10": embeddingRequest(1536, 10),
		"32k numbers in metadata":  []byte(`{"query":"q","chunks":[{"metadata":[` + strings.Repeat("0,", 1<<15) + `0]}]}`),
		"32k strings in metadata":  []byte(`{"query":"q","chunks":[{"metadata":[` + strings.Repeat(`"a",`, 1<<15) + `"a"]}]}`),
	} {
		t.Run(name, func(t *testing.T) {
			g := newRealGate(t, ModuleTinyGo, Options{PoolSize: 1}) // default 1 s deadline
			start := time.Now()
			if _, err := g.Evaluate(ctx, body); err != nil {
				t.Fatalf("%d bytes: %v after %v", len(body), firstLine(err), time.Since(start))
			}
		})
	}
	// Just under the default max_request_bytes, 2 Mi zeros: natively a
	// limit error (the value budget, 1 Mi values) in 0.2 s. The TinyGo module
	// times out (the scan above); the standard-Go module traps, because 1 Mi
	// parsed values (56 B each) do not fit its 64 MiB cap next to its runtime.
	under := []byte(`{"query":"q","query_embedding":[` + strings.Repeat("0,", (4<<20-64)/2) + `0]}`)
	for _, m := range realModules {
		t.Run("4 MiB of zeros/"+m.String(), func(t *testing.T) {
			g := newRealGate(t, m, Options{PoolSize: 1})
			_, err := g.Evaluate(ctx, under)
			var ge *GateError
			if !errors.As(err, &ge) || ge.Code != "limit" {
				t.Fatalf("%d bytes: %v, want a limit error", len(under), firstLine(err))
			}
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
