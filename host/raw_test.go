package host

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/internal/testenv"
)

// realABIs are the two call paths of the real modules: every test here runs
// on both, so the raw path (raw.go) can never drift from the Extism one.
var realABIs = []ABI{ABIRaw, ABIExtism}

// The raw and Extism paths give the same bytes for every golden request
// under its policy, and both are the golden decision; errors (bad input,
// validate, describe) are the same error JSON.
func TestABIParity(t *testing.T) {
	byPolicy, policies := goldenCases(t)
	if len(policies) == 0 {
		testenv.Missing(t, "no golden cases in testdata/requests/<policy>/*.json")
	}
	ctx := context.Background()
	bad := [][]byte{nil, []byte(`{"query":"q","chunks":[`), []byte(`{"query":42,"chunks":[]}`),
		[]byte(`{"query":"q","chunks":[{"id":"a","text":"t","scores":{"vector":"high"}}]}`)}
	answers := [][]byte{[]byte(`{"answer":"Rotate it [S1].","tags":["S1"]}`), []byte(`{"answer":`), []byte(`{}`)}
	for _, m := range realModules {
		for _, policy := range policies {
			policyJSON, err := os.ReadFile(filepath.Join("..", "policies", policy+".json"))
			if err != nil {
				t.Fatal(err)
			}
			gates := map[ABI]*Gate{}
			for _, abi := range realABIs {
				gates[abi] = newRealGate(t, m, Options{Policy: policyJSON, PoolSize: 1, ABI: abi})
				if gates[abi].ABI() != abi {
					t.Fatalf("%s: asked for %s, got %s", m, abi, gates[abi].ABI())
				}
			}
			same := func(what string, call func(*Gate) ([]byte, error), want []byte) {
				t.Helper()
				var outs [2][]byte
				var errs [2]error
				for i, abi := range realABIs {
					outs[i], errs[i] = call(gates[abi])
				}
				var ge0, ge1 *GateError
				switch {
				case errs[0] == nil && errs[1] == nil:
					if !bytes.Equal(outs[0], outs[1]) {
						t.Errorf("%s %s %s: raw %s\nextism %s", m, policy, what, outs[0], outs[1])
					} else if want != nil && !bytes.Equal(outs[0], want) {
						t.Errorf("%s %s %s: %s, want the golden %s", m, policy, what, outs[0], want)
					}
				case errors.As(errs[0], &ge0) && errors.As(errs[1], &ge1):
					if !bytes.Equal(ge0.JSON, ge1.JSON) || (want != nil && !bytes.Equal(ge0.JSON, want)) {
						t.Errorf("%s %s %s: raw %s, extism %s, golden %s", m, policy, what, ge0.JSON, ge1.JSON, want)
					}
				default:
					t.Errorf("%s %s %s: raw %v, extism %v", m, policy, what, errs[0], errs[1])
				}
			}
			for _, c := range byPolicy[policy] {
				same(c.name, func(g *Gate) ([]byte, error) { return g.Evaluate(ctx, c.request) }, bytes.TrimSuffix(c.decision, []byte("\n")))
			}
			for i, b := range bad {
				same("bad input "+strings.Repeat("#", i+1), func(g *Gate) ([]byte, error) { return g.Evaluate(ctx, b) }, nil)
			}
			for i, a := range answers {
				same("answer "+strings.Repeat("#", i+1), func(g *Gate) ([]byte, error) { return g.Validate(ctx, a) }, nil)
			}
			same("describe", func(g *Gate) ([]byte, error) { return g.Describe(ctx) }, nil)
			for abi, g := range gates {
				if s := g.Stats(); s.Discarded != 0 || s.Created != 1 {
					t.Errorf("%s %s %s: an instance was replaced: %+v", m, policy, abi, s)
				}
			}
		}
	}
}

// The raw path reuses the guest's input buffer while inputs fit and asks for
// a bigger one when they do not: a small, a large and a small request again
// each give the native bytes. The request is decoded in place in the guest,
// so a stale byte left from a longer input would show here.
func TestRawInputReuse(t *testing.T) {
	native, err := NewNative(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	reqs := [][]byte{[]byte(sampleRequest), bigRequest(40, 30), []byte(sampleRequest), bigRequest(3, 2), bigRequest(80, 40)}
	for _, m := range realModules {
		g := newRealGate(t, m, Options{PoolSize: 1, ABI: ABIRaw})
		for i, req := range reqs {
			want, err := native.Evaluate(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := g.Evaluate(ctx, req); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s request %d (%d bytes): %v\ngot  %.200s\nwant %.200s", m, i, len(req), err, got, want)
			}
		}
	}
}

// ABIAuto takes the raw path only when the module has the raw exports;
// ABIRaw refuses a module without them.
func TestABISelection(t *testing.T) {
	ctx := context.Background()
	for _, m := range realModules {
		if g := newRealGate(t, m, Options{PoolSize: 1}); g.ABI() != ABIRaw {
			t.Errorf("%s: ABIAuto chose %s, want raw", m, g.ABI())
		}
	}
	if g := newHostileGate(t, Options{PoolSize: 1}); g.ABI() != ABIExtism {
		t.Errorf("hostile guest: ABIAuto chose %s, want extism", g.ABI())
	}
	if g, err := New(ctx, Options{Wasm: hostileModule(), ABI: ABIRaw}); err == nil || !strings.Contains(err.Error(), "no raw exports") {
		if g != nil {
			g.Close(ctx)
		}
		t.Errorf("ABIRaw on a module without raw exports: %v", err)
	}
	if _, err := New(ctx, Options{ABI: ABI(7)}); err == nil {
		t.Error("ABI(7) accepted")
	}
}

// Deadlines and the memory cap hold on both paths of the real modules (the
// hostile guest covers the Extism path's faults in depth). The sizes are
// TestRealMemoryCapSurvives's: each request needs more than its cap.
func TestABIFaults(t *testing.T) {
	caps := map[Module]struct {
		pages              uint32
		chunks, textRepeat int
	}{ModuleTinyGo: {17, 100, 140}, ModuleGo: {72, 100, 200}}
	for _, m := range realModules {
		for _, abi := range realABIs {
			t.Run(m.String()+"/"+abi.String(), func(t *testing.T) {
				c := caps[m]
				big := bigRequest(c.chunks, c.textRepeat)
				g := newRealGate(t, m, Options{PoolSize: 1, ABI: abi, MaxPages: c.pages, MaxInputBytes: len(big), Timeout: 20 * time.Second})
				ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
				defer cancel()
				if _, err := g.Evaluate(ctx, []byte(sampleRequest)); !errors.Is(err, ErrTimeout) {
					t.Fatalf("expired context: %v, want ErrTimeout", err)
				}
				if _, err := g.Evaluate(context.Background(), big); !errors.Is(err, ErrTrap) {
					t.Fatalf("%d-byte request under a %d-page cap: %v, want ErrTrap", len(big), c.pages, err)
				}
				if _, err := g.Evaluate(context.Background(), []byte(sampleRequest)); err != nil {
					t.Fatalf("after the faults: %v", err)
				}
				if s := g.Stats(); s.Discarded < 1 || s.Live != 1 { // the timeout may poison one too
					t.Fatalf("stats %+v, want the trapped instance replaced", s)
				}
			})
		}
	}
}

// InterruptNever (no termination checks) gives the same bytes, and its deadline
// is checked around the run: an expired context never starts the guest, a
// run that ends after the deadline is ErrTimeout, and neither costs the
// instance.
func TestInterruptNever(t *testing.T) {
	native, err := NewNative(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	big := bigRequest(200, 40)
	want, err := native.Evaluate(ctx, big)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range realModules {
		t.Run(m.String(), func(t *testing.T) {
			g := newRealGate(t, m, Options{PoolSize: 1, Interrupt: InterruptNever, Timeout: time.Minute})
			if got, err := g.Evaluate(ctx, big); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("got %.100s, %v\nwant %.100s", got, err, want)
			}
			expired, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
			defer cancel()
			if _, err := g.Evaluate(expired, big); !errors.Is(err, ErrTimeout) {
				t.Fatalf("expired context: %v, want ErrTimeout", err)
			}
			short := newRealGate(t, m, Options{PoolSize: 1, Interrupt: InterruptNever, Timeout: time.Microsecond})
			if _, err := short.Evaluate(ctx, big); !errors.Is(err, ErrTimeout) {
				t.Fatalf("a run longer than a 1 µs Timeout: %v, want ErrTimeout", err)
			}
			for _, g := range []*Gate{g, short} {
				if s := g.Stats(); s.Discarded != 0 || s.Created != 1 {
					t.Errorf("stats %+v: a timeout cost an instance", s)
				}
			}
		})
	}
}
