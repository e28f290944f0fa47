package host

import (
	"context"
	"testing"
)

// Benchmarks report; they assert nothing about speed (the machine is shared
// and noisy). Compare within one run: go test ./host -bench . -benchmem

func BenchmarkEvaluateNative(b *testing.B) {
	n, err := NewNative(nil)
	if err != nil {
		b.Fatal(err)
	}
	req := []byte(sampleRequest)
	ctx := context.Background()
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := n.Evaluate(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvaluateWasm(b *testing.B) {
	req := []byte(sampleRequest)
	ctx := context.Background()
	for _, m := range realModules {
		b.Run(m.String(), func(b *testing.B) {
			g := newRealGate(b, m, Options{PoolSize: 1})
			b.SetBytes(int64(len(req)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Evaluate(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The same through a full pool from every CPU: what a server sees.
func BenchmarkEvaluateWasmParallel(b *testing.B) {
	req := []byte(sampleRequest)
	for _, m := range realModules {
		b.Run(m.String(), func(b *testing.B) {
			g := newRealGate(b, m, Options{})
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := g.Evaluate(context.Background(), req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// The cost of the call path alone: describe does almost nothing in the
// guest, and the hostile guest's empty call does nothing at all.
func BenchmarkCallOverhead(b *testing.B) {
	ctx := context.Background()
	for _, m := range realModules {
		b.Run("describe/"+m.String(), func(b *testing.B) {
			g := newRealGate(b, m, Options{PoolSize: 1})
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Describe(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("empty-guest", func(b *testing.B) {
		g := newHostileGate(b, Options{PoolSize: 1})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := g.Evaluate(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("empty-guest/no-deadline", func(b *testing.B) {
		g := newHostileGate(b, Options{PoolSize: 1, Timeout: -1})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := g.Evaluate(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("native-describe", func(b *testing.B) {
		n, _ := NewNative(nil)
		b.ReportAllocs()
		for b.Loop() {
			n.Describe(ctx)
		}
	})
}

// Instantiation: what replacing a poisoned instance costs.
func BenchmarkNewInstance(b *testing.B) {
	ctx := context.Background()
	for _, m := range realModules {
		b.Run(m.String(), func(b *testing.B) {
			g := newRealGate(b, m, Options{PoolSize: 1})
			b.ReportAllocs()
			for b.Loop() {
				in, err := g.newInstance(ctx)
				if err != nil {
					b.Fatal(err)
				}
				in.close(ctx)
			}
		})
	}
}
