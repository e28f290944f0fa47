package host

import (
	"context"
	"strconv"
	"testing"
)

// BenchmarkPoolContention: the call floor (describe: almost nothing runs in
// the guest) from 1 goroutine and from 8 on the default pool (GOMAXPROCS
// instances), as bench/load's 8 clients use it. With more callers than
// instances, time per call beyond 1-goroutine's /GOMAXPROCS is the pool's
// hand-off; allocations per call show what the host path still allocates.
// Read it with -benchmem, -mutexprofile or -blockprofile; it asserts nothing.
func BenchmarkPoolContention(b *testing.B) {
	ctx := context.Background()
	for _, callers := range []int{1, 8} {
		b.Run("describe/callers="+strconv.Itoa(callers), func(b *testing.B) {
			g := newRealGate(b, ModuleTinyGo, Options{Interrupt: InterruptNever})
			b.ReportAllocs()
			if callers == 1 {
				for range b.N {
					if _, err := g.Describe(ctx); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			b.SetParallelism((callers + 1) / 2)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := g.Describe(ctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
