package gate

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestEvaluateMatchesDecide: Evaluate (which may write the prompt's sources
// straight from the chunks) and AppendDecision over Decide's decision give
// the same bytes for every golden request, whichever ran before; so does
// AppendEvaluateInPlace (the Wasm guest's path), after what dst held.
func TestEvaluateMatchesDecide(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(goldenRoot, "requests", "*", "*.json"))
	if len(files) < 20 {
		t.Fatalf("%d golden requests", len(files))
	}
	engines := map[string]*Engine{}
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f))
		e := engines[name]
		if e == nil {
			e = presetEngine(t, name)
			engines[name] = e
		}
		req, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for round := 0; round < 2; round++ {
			got, err := e.Evaluate(req)
			d, derr := decideJSON(e, req)
			if (err == nil) != (derr == nil) {
				t.Fatalf("%s: Evaluate error %v, Decide error %v", f, err, derr)
			}
			if err != nil {
				continue
			}
			if want := AppendDecision(nil, d); !bytes.Equal(got, want) {
				t.Fatalf("%s round %d: Evaluate\n%s\nAppendDecision(Decide)\n%s", f, round, got, want)
			}
			checkDecisionSize(t, d) // output_limit_test.go
			inPlace, err := e.AppendEvaluateInPlace([]byte("prefix"), append([]byte(nil), req...))
			if err != nil || !bytes.Equal(inPlace, append([]byte("prefix"), got...)) {
				t.Fatalf("%s round %d: AppendEvaluateInPlace\n%s (%v)\nEvaluate\n%s", f, round, inPlace, err, got)
			}
			if d.Prompt != nil && d.Prompt.Minimal == "" && d.Prompt.Sources == "" {
				t.Fatalf("%s: Decide's prompt has no sources", f)
			}
		}
	}
}
