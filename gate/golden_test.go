package gate

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

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
	dirs, err := os.ReadDir(filepath.Join(goldenRoot, "requests"))
	if err != nil {
		t.Fatal(err)
	}
	actions := map[Action]bool{}
	seenPolicies := map[string]bool{}
	total := 0
	for _, dir := range dirs {
		if !dir.IsDir() {
			continue
		}
		name := dir.Name()
		pj, ok := policies.Get(name)
		if !ok {
			t.Errorf("requests/%s: no preset policy %s", name, name)
			continue
		}
		e, err := NewEngine(pj)
		if err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(goldenRoot, "requests", name, "*.json"))
		sort.Strings(files)
		for _, f := range files {
			req, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Evaluate(req)
			if err != nil {
				got = AppendError(nil, err)
			}
			out := filepath.Join(goldenRoot, "decisions", name, filepath.Base(f))
			if *update {
				if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(out, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(out)
			if err != nil {
				t.Errorf("%s: %v (run go test ./gate -run TestGolden -update)", out, err)
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s/%s: decision differs from golden\n got: %s\nwant: %s", name, filepath.Base(f), got, want)
			}
			if d, err := decideJSON(e, req); err == nil {
				actions[d.Action] = true
			}
			seenPolicies[name] = true
			total++
		}
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
