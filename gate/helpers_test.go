package gate

import (
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/policies"
)

func presetEngine(t testing.TB, name string) *Engine {
	t.Helper()
	pj, ok := policies.Get(name)
	if !ok {
		t.Fatalf("no preset %s", name)
	}
	e, err := NewEngine(pj)
	if err != nil {
		t.Fatalf("preset %s: %v", name, err)
	}
	return e
}

func mustDecide(t testing.TB, e *Engine, req *Request) *Decision {
	t.Helper()
	d, err := e.Decide(req)
	if err != nil {
		t.Fatalf("decide: %v", err)
	}
	return d
}

func sig(d *Decision, name string) (float64, bool) {
	for _, s := range d.Signals {
		if s.Name == name {
			return s.Value, true
		}
	}
	return 0, false
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func words(w string, n int) string { return strings.TrimSpace(strings.Repeat(w+" ", n)) }

func vec(v float64) Scores { return Scores{Vector: v, HasVector: true} }
