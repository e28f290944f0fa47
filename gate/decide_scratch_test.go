package gate

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// An Evaluate decision is built in the engine's reused parts
// (decisionScratch); a Decide decision is the caller's. Deciding every
// golden request, then evaluating all of them in reverse order on the same
// engine, each Decide decision must still encode as it did, and each
// Evaluate must give the golden bytes whatever came before it.
func TestDecideOutlivesEvaluate(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(goldenRoot, "requests", "default", "*.json"))
	sort.Strings(files)
	if len(files) < 3 {
		t.Fatalf("only %d golden requests", len(files))
	}
	e, err := NewEngine(nil)
	if err != nil {
		t.Fatal(err)
	}
	var reqs [][]byte
	var names []string
	var decided []*Decision
	var first [][]byte
	for _, f := range files {
		req, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := decideJSON(e, req)
		if err != nil {
			continue
		}
		reqs = append(reqs, req)
		names = append(names, filepath.Base(f))
		decided = append(decided, d)
		first = append(first, AppendDecision(nil, d))
	}
	for i := len(reqs) - 1; i >= 0; i-- {
		got, err := e.Evaluate(reqs[i])
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(goldenRoot, "decisions", "default", names[i]))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: Evaluate after others differs from golden", names[i])
		}
	}
	for i, d := range decided {
		if got := AppendDecision(nil, d); !bytes.Equal(got, first[i]) {
			t.Errorf("decision %d changed after later Evaluate calls:\n got: %s\nwant: %s", i, got, first[i])
		}
	}
}

// DecideInPlace's decision is the engine's, but until the next call it
// encodes as Decide's does: for every golden request, the same JSON, and a
// prompt whose sources block is the same text.
func TestDecideInPlaceMatchesDecide(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(goldenRoot, "requests", "default", "*.json"))
	sort.Strings(files)
	mine, err := NewEngine(nil)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := NewEngine(nil)
	if err != nil {
		t.Fatal(err)
	}
	prompts := 0
	for _, f := range files {
		req, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := decideJSON(theirs, req)
		if err != nil {
			continue
		}
		r, err := DecodeRequest(req, &mine.policy.Limits)
		if err != nil {
			t.Fatal(err)
		}
		got, err := mine.DecideInPlace(r)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		if g, w := AppendDecision(nil, got), AppendDecision(nil, want); !bytes.Equal(g, w) {
			t.Errorf("%s: DecideInPlace encodes\n%s\nDecide\n%s", filepath.Base(f), g, w)
		}
		if (got.Prompt == nil) != (want.Prompt == nil) || got.Prompt != nil && got.Prompt.Sources != want.Prompt.Sources {
			t.Errorf("%s: DecideInPlace's prompt differs from Decide's", filepath.Base(f))
		}
		if got.Prompt != nil && got.Prompt.Sources != "" {
			prompts++
		}
	}
	if prompts < 3 {
		t.Fatalf("only %d golden requests have a sources block", prompts)
	}
}
