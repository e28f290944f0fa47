package host

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/internal/hostile"
)

// BenchmarkWorstCase times the slowest inputs within the default limits
// (internal/hostile: the largest valid requests and every hostile class;
// TestAdversarial runs them all, on one instance, and logs the worst per
// call) through the TinyGo module, with and without termination checks,
// so the cost of the checks shows. Run it with a few iterations:
//
//	go test ./host -run '^$' -bench WorstCase -benchtime 2x
//
// Each sub-benchmark reports ms per call and whether the call decided or
// answered an error (a limit error after parsing everything is a result
// too: the time is spent either way). It asserts nothing about speed.
func worstCases() []struct {
	name string
	op   string
	body []byte
} {
	var out []struct {
		name string
		op   string
		body []byte
	}
	for _, c := range hostile.Cases(gate.DefaultLimits().MaxRequestBytes) {
		out = append(out, struct {
			name string
			op   string
			body []byte
		}{c.Class + ": " + c.Name, c.Op, c.Body})
	}
	return out
}

func BenchmarkWorstCase(b *testing.B) {
	ctx := context.Background()
	for _, c := range worstCases() {
		for _, noInt := range []bool{true, false} {
			name := c.name + "/checks"
			if noInt {
				name = c.name + "/no-interrupt"
			}
			b.Run(name, func(b *testing.B) {
				g := newRealGate(b, ModuleTinyGo, Options{PoolSize: 1, Interrupt: checksIf(!noInt), Timeout: 5 * time.Minute})
				var outcome string
				var worst time.Duration
				for range b.N {
					start := time.Now()
					_, err := g.call(ctx, c.op, c.body)
					worst = max(worst, time.Since(start))
					var ge *GateError
					switch {
					case err == nil:
						outcome = "decided"
					case errors.As(err, &ge):
						outcome = ge.Code
					default:
						b.Fatalf("%d bytes: %v", len(c.body), firstLine(err))
					}
				}
				b.ReportMetric(float64(worst.Microseconds())/1e3, "worst-ms")
				b.Logf("%d bytes: %s", len(c.body), outcome)
			})
		}
	}
}

// BenchmarkWorstCaseAnswer times the validate export on the worst-case
// answer (two sentences repeated, one cited, one not) at growing sizes, up
// to the default max_request_bytes, natively and through the TinyGo module
// without termination checks, so that the time's growth with the answer's
// size shows: it should stay linear (docs/performance.md). Run it once per
// size:
//
//	go test ./host -run '^$' -bench WorstCaseAnswer -benchtime 1x
func BenchmarkWorstCaseAnswer(b *testing.B) {
	ctx := context.Background()
	for _, size := range []int{64 << 10, 128 << 10, 256 << 10, 512 << 10, 1<<20 - 64} {
		body := worstAnswer(size)
		b.Run(strconv.Itoa(size>>10)+"_KiB/native", func(b *testing.B) {
			n, err := NewNative(nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := n.Validate(ctx, body); err != nil {
					b.Fatal(firstLine(err))
				}
			}
		})
		b.Run(strconv.Itoa(size>>10)+"_KiB/tinygo-no-interrupt", func(b *testing.B) {
			g := newRealGate(b, ModuleTinyGo, Options{PoolSize: 1, Interrupt: InterruptNever, Timeout: 5 * time.Minute})
			if _, err := g.call(ctx, "describe", nil); err != nil { // instantiate outside the timing
				b.Fatal(firstLine(err))
			}
			b.ResetTimer()
			for range b.N {
				if _, err := g.call(ctx, "validate", body); err != nil {
					b.Fatal(firstLine(err))
				}
			}
		})
	}
}

// worstAnswer is the validate input of an answer of size bytes, two
// sentences repeated, one cited and one not.
func worstAnswer(size int) []byte {
	answer := strings.Repeat("The key rotates every day [S1]. Nothing else is said here. ", size/59+1)[:size]
	return []byte(`{"answer":"` + answer + `","tags":["S1","S2"],"query":"q"}`)
}

func TestWorstCasesWithinLimits(t *testing.T) {
	// Every input is under the default max_request_bytes, so the time it
	// takes is a time the default limits allow.
	for _, c := range worstCases() {
		if len(c.body) > gate.DefaultLimits().MaxRequestBytes {
			t.Errorf("%s: %d bytes, over the default max_request_bytes", c.name, len(c.body))
		}
	}
}
