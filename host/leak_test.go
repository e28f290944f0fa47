package host

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/internal/hostile"
)

// Faults must not leak: after many traps, timeouts and memory-cap hits the
// pool holds at most PoolSize instances, the host heap is where it was, and
// closing the gates returns every goroutine. A leaked instance costs at least
// a megabyte (its linear memory and wazero's module state), so a bound of
// 64 KiB of host heap per fault catches one leaked instance in sixteen faults.

const leakBudgetPerFault = 64 << 10

type heapGoroutines struct {
	heap       uint64
	goroutines int
}

func measure() heapGoroutines {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return heapGoroutines{heap: m.HeapAlloc, goroutines: runtime.NumGoroutine()}
}

// waitGoroutines waits for background goroutines (wazero's context watchers)
// to end, up to a second, and returns the count.
func waitGoroutines(want int) int {
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(time.Second); n > want && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	return n
}

// fault is one way to poison an instance, and what the caller must see.
type fault struct {
	name  string
	gate  func(t *testing.T) *Gate
	input []byte
	want  error
	next  []byte // a good input for the same gate
	// deadline, when set, bounds the faulting call through its context; the
	// gate's own Timeout stays generous so the next call (which makes a fresh
	// instance) is not cut short on a loaded machine.
	deadline time.Duration
}

func faults(t *testing.T) []fault {
	// A request within the limits that takes far longer than 20 ms in
	// either module with termination checks on (any long call would do):
	// the largest CJK request, 1000 chunks of multi-byte text.
	var slow []byte
	for _, c := range hostile.Cases(gate.DefaultLimits().MaxRequestBytes) {
		if c.Name == "1000 chunks of 2 KiB CJK" {
			slow = c.Body
		}
	}
	if slow == nil {
		t.Fatal("internal/hostile has no CJK case")
	}
	fs := []fault{
		{name: "hostile trap", gate: func(t *testing.T) *Gate { return newHostileGate(t, Options{PoolSize: 2}) },
			input: []byte("T"), want: ErrTrap, next: []byte("ok")},
		{name: "hostile endless loop", gate: func(t *testing.T) *Gate { return newHostileGate(t, Options{PoolSize: 2}) },
			input: []byte("L"), want: ErrTimeout, next: []byte("ok"), deadline: 20 * time.Millisecond},
		{name: "hostile bare failure", gate: func(t *testing.T) *Gate { return newHostileGate(t, Options{PoolSize: 2}) },
			input: []byte("X"), want: ErrTrap, next: []byte("ok")},
	}
	for _, m := range realModules {
		for _, abi := range []ABI{ABIRaw, ABIExtism} {
			m, abi := m, abi
			pages, big := uint32(17), bigRequest(100, 140) // the sizes TestRealMemoryCapSurvives measured
			if m == ModuleGo {
				pages, big = 72, bigRequest(100, 200)
			}
			fs = append(fs,
				fault{name: m.String() + "/" + abi.String() + " out of memory", gate: func(t *testing.T) *Gate {
					return newRealGate(t, m, Options{PoolSize: 2, ABI: abi, MaxPages: pages, MaxInputBytes: len(big), Timeout: 20 * time.Second})
				}, input: big, want: ErrTrap, next: []byte(sampleRequest)},
				fault{name: m.String() + "/" + abi.String() + " deadline", gate: func(t *testing.T) *Gate {
					// InterruptAlways: the bundled modules run without
					// termination checks by default; this is the stop.
					return newRealGate(t, m, Options{PoolSize: 2, ABI: abi, Interrupt: InterruptAlways, Timeout: 20 * time.Second})
				}, input: slow, want: ErrTimeout, next: []byte(sampleRequest), deadline: 20 * time.Millisecond},
			)
		}
	}
	return fs
}

func TestFaultsLeakNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("faults every instance type many times")
	}
	const warm, rounds = 4, 16
	ctx := context.Background()
	base := measure()
	for _, f := range faults(t) {
		t.Run(f.name, func(t *testing.T) {
			g := f.gate(t)
			poison := func(n int) {
				for range n {
					fctx, cancel := ctx, context.CancelFunc(func() {})
					if f.deadline > 0 {
						fctx, cancel = context.WithTimeout(ctx, f.deadline)
					}
					_, err := g.Evaluate(fctx, f.input)
					cancel()
					if !errors.Is(err, f.want) {
						t.Fatalf("fault: %v, want %v", firstLine(err), f.want)
					}
					if _, err := g.Evaluate(ctx, f.next); err != nil {
						t.Fatalf("the call after the fault: %v", err)
					}
				}
			}
			poison(warm)
			before := measure()
			poison(rounds)
			after := measure()
			s := g.Stats()
			if s.Live > s.Size || s.InUse != 0 || s.Live != s.Idle || s.Discarded != warm+rounds {
				t.Fatalf("pool after %d faults: %+v", warm+rounds, s)
			}
			grew := int64(after.heap) - int64(before.heap)
			if grew > rounds*leakBudgetPerFault {
				t.Fatalf("host heap grew %d bytes over %d faults (budget %d each)", grew, rounds, leakBudgetPerFault)
			}
			t.Logf("%d faults: heap %+d bytes, goroutines %d -> %d, pool %+v", rounds, grew, before.goroutines, after.goroutines, s)
		})
	}
	// Every gate is closed by its test's cleanup, which has run by now.
	if n := waitGoroutines(base.goroutines); n > base.goroutines {
		buf := make([]byte, 1<<16)
		t.Fatalf("goroutines: %d before, %d after closing every gate\n%s", base.goroutines, n, buf[:runtime.Stack(buf, true)])
	}
}
