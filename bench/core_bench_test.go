package bench

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/ctxgate/ctxgate/gate"
)

// BenchmarkCoreDL19 is the native core (gate.Engine.Evaluate, default policy)
// on the perf suite's DL19 workloads, cycling through one request per query:
// the figure the Wasm builds are compared against, for pprof and benchstat.
// Passages are MS MARCO's ~350 bytes; chunks join four (~1.5 KB each).
func BenchmarkCoreDL19(b *testing.B) {
	d, err := LoadDL19(filepath.Join("..", "..", "shared", "data"))
	if errors.Is(err, ErrNoData) {
		b.Skip("no DL19 data beside the repository")
	}
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range []struct {
		name   string
		n, per int
	}{{"passages5", 5, 1}, {"passages20", 20, 1}, {"chunks5", 5, 4}, {"chunks20", 20, 4}, {"chunks100", 100, 4}} {
		w := d.Workload(s.name, s.n, s.per)
		b.Run(s.name, func(b *testing.B) {
			e, err := gate.NewEngine(nil)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range w.Requests {
				if _, err := e.Evaluate(r); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(w.MeanBytes()))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := e.Evaluate(w.Requests[i%len(w.Requests)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCoreDL19Parts splits the 20-chunk DL19 workload into the core's
// three stages (decode, decide, encode), for the share each one takes.
func BenchmarkCoreDL19Parts(b *testing.B) {
	d, err := LoadDL19(filepath.Join("..", "..", "shared", "data"))
	if errors.Is(err, ErrNoData) {
		b.Skip("no DL19 data beside the repository")
	}
	if err != nil {
		b.Fatal(err)
	}
	w := d.Workload("chunks20", 20, 4)
	e, err := gate.NewEngine(nil)
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([]*gate.Request, len(w.Requests))
	decs := make([]*gate.Decision, len(w.Requests))
	for i, r := range w.Requests {
		if reqs[i], err = gate.DecodeRequest(r, nil); err != nil {
			b.Fatal(err)
		}
		if decs[i], err = e.Decide(reqs[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := gate.DecodeRequest(w.Requests[i%len(w.Requests)], nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decide", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := e.Decide(reqs[i%len(reqs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = gate.AppendDecision(nil, decs[i%len(decs)])
		}
	})
}
