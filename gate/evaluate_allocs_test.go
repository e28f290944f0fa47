package gate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/ctxgate/ctxgate/policies"
)

// TestEvaluateAllocs: a warm engine evaluating a request it decoded in place
// (the Wasm guest's raw path) to inject or caveat allocates nothing
// natively. Under TinyGo every allocation is a heap walk, and its garbage is
// swept in pauses of 0.3-2 ms (the whole heap, docs/performance.md), so the
// guest's common case must make none. Refusals, fallbacks and merged
// results_per_query lists still allocate a little (fill, mergeResults).
func TestEvaluateAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage counters change allocations")
	}
	total := 0
	dirs, _ := filepath.Glob(filepath.Join(goldenRoot, "requests", "*"))
	sort.Strings(dirs)
	for _, dir := range dirs {
		pj, ok := policies.Get(filepath.Base(dir))
		if !ok {
			continue
		}
		e, err := NewEngine(pj)
		if err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		sort.Strings(files)
		var out, in []byte
		checked := 0
		for _, f := range files {
			req, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			run := func() {
				in = append(in[:0], req...)
				out, err = e.AppendEvaluateInPlace(out[:0], in)
			}
			run()
			if err != nil {
				continue
			}
			var d struct {
				Action Action
			}
			if json.Unmarshal(out, &d) != nil || (d.Action != ActionInject && d.Action != ActionCaveat) ||
				bytes.Contains(req, []byte(`"results_per_query"`)) {
				continue
			}
			checked++
			if n := testing.AllocsPerRun(5, run); n != 0 || err != nil {
				t.Errorf("%s: %.0f allocations per evaluation (%v)", f, n, err)
			}
		}
		total += checked
	}
	if total < 10 {
		t.Fatalf("only %d golden requests inject or caveat", total)
	}
}
