package gate

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxgate/ctxgate/internal/testgolden"
	"github.com/ctxgate/ctxgate/policies"
)

// Regenerate with: go test ./gate -run TestGolden -update
var update = flag.Bool("update", false, "rewrite testdata/decisions from testdata/requests")

const goldenRoot = "../testdata"

// TestGolden decides every testdata/requests/<policy>/<case>.json with
// policies/<policy>.json and compares the bytes with
// testdata/decisions/<policy>/<case>.json (exact bytes, no trailing newline:
// every host's parity test compares against the same files).
func TestGolden(t *testing.T) {
	cases, err := testgolden.Load(goldenRoot)
	if err != nil {
		t.Fatal(err)
	}
	actions := map[Action]bool{}
	seenPolicies := map[string]bool{}
	engines := map[string]*Engine{}
	total := 0
	for _, c := range cases {
		e, ok := engines[c.Policy]
		if !ok {
			pj, found := policies.Get(c.Policy)
			if !found {
				t.Errorf("requests/%s: no preset policy %s", c.Policy, c.Policy)
				continue
			}
			if e, err = NewEngine(pj); err != nil {
				t.Fatal(err)
			}
			engines[c.Policy] = e
		}
		if e == nil {
			continue
		}
		got, err := e.Evaluate(c.Request)
		if err != nil {
			got = AppendError(nil, err)
		}
		want := c.Decision
		if *update {
			if err := os.MkdirAll(filepath.Dir(c.DecisionPath), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(c.DecisionPath, got, 0o644); err != nil {
				t.Fatal(err)
			}
			want = got
		}
		if want == nil {
			t.Errorf("%s: no golden decision (run go test ./gate -run TestGolden -update)", c.DecisionPath)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s/%s: decision differs from golden\n got: %s\nwant: %s", c.Policy, c.Name, got, want)
		}
		if d, err := decideJSON(e, c.Request); err == nil {
			actions[d.Action] = true
		}
		seenPolicies[c.Policy] = true
		total++
	}
	if total < 20 {
		t.Errorf("only %d golden pairs, want >= 20", total)
	}
	for _, a := range []Action{ActionInject, ActionCaveat, ActionFallback, ActionRefuse} {
		if !actions[a] {
			t.Errorf("no golden case decides %s", a)
		}
	}
	for _, n := range policies.Names() {
		if !seenPolicies[n] {
			t.Errorf("no golden case for preset %s", n)
		}
	}
}

func decideJSON(e *Engine, req []byte) (*Decision, error) {
	r, err := DecodeRequest(req, &e.policy.Limits)
	if err != nil {
		return nil, err
	}
	return e.Decide(r)
}
