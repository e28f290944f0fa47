package calibrate

import (
	"bytes"
	"strings"
	"testing"
)

const goodLine = `{"request": {"query": "reset password", "chunks": [{"id": "a", "text": "reset the password", "scores": {"vector": 0.8}}]}, "label": 1, "group": "q1"}`

func TestReadExamples(t *testing.T) {
	exs, err := ReadExamples(strings.NewReader(goodLine+"\n\n"+strings.Replace(goodLine, `"label": 1`, `"label": 0`, 1)+"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) != 2 || !exs[0].Label || exs[1].Label || exs[0].Group != "q1" || exs[0].Line != 1 || exs[1].Line != 3 {
		t.Fatalf("got %+v", exs)
	}
	if c := exs[0].Request.Chunks[0]; c.ID != "a" || !c.Scores.HasVector || c.Scores.Vector != 0.8 {
		t.Errorf("request decoded as %+v", c)
	}
}

// Bad input is rejected naming the line and the field.
func TestReadExamplesRejects(t *testing.T) {
	for _, c := range []struct {
		name, line, want string
	}{
		{"not JSON", `{"request":`, "line 2: not a JSON object"},
		{"no request", `{"label": 1}`, "line 2: request: missing"},
		{"null request", `{"request": null, "label": 1}`, "line 2: request: missing"},
		{"no label", `{"request": {"query": "q", "chunks": []}}`, "line 2: label: missing"},
		{"label 2", `{"request": {"query": "q", "chunks": []}, "label": 2}`, "line 2: label: must be 1 or 0, not 2"},
		{"label true", `{"request": {"query": "q", "chunks": []}, "label": true}`, "line 2: label: must be 1 or 0"},
		{"label as string", `{"request": {"query": "q", "chunks": []}, "label": "1"}`, "line 2: label: must be 1 or 0"},
		{"group not a string", `{"request": {"query": "q", "chunks": []}, "label": 1, "group": 7}`, "line 2: group: must be a string"},
		{"misspelt key", `{"request": {"query": "q", "chunks": []}, "label": 1, "groups": "x"}`, "line 2: groups: unknown field"},
		{"blank query", `{"request": {"query": " ", "chunks": []}, "label": 1}`, "line 2: request.query: must not be empty"},
		{"bad score", `{"request": {"query": "q", "chunks": [{"id": "a", "text": "t", "scores": {"vector": "high"}}]}, "label": 1}`,
			"line 2: request.chunks[0].scores.vector:"},
		{"unknown request field", `{"request": {"query": "q", "chunk": []}, "label": 0}`, "line 2: request.chunk: unknown field"},
		{"joined line, request masked", `{"label": 1, "decision_id": "x", "signals": {}, "erased": ["query"]}`, "line 2: request: missing: the decision log did not hold this request whole"},
		// Numbers calibration would overflow on (the median of two scores,
		// its rounding), and one no float64 holds.
		{"the largest float64 as bm25", `{"request": {"query": "q", "chunks": [{"id": "a", "text": "t", "scores": {"bm25": 1.797e308}}]}, "label": 1}`,
			"line 2: request.chunks[0].scores.bm25: must be a finite number at most 1e300 in magnitude"},
		{"1e301 as a merged list's sparse score", `{"request": {"query": "q", "results_per_query": [[{"id": "a", "text": "t"}], [{"id": "b", "text": "t", "scores": {"sparse": 1e301}}]]}, "label": 0}`,
			"line 2: request.results_per_query[1][0].scores.sparse: must be a finite number at most 1e300"},
		// A repeated member means different things to different readers:
		// bad JSON, as in a gate request.
		{"a duplicate label", `{"request": {"query": "q", "chunks": []}, "label": 1, "label": 0}`, `line 2: bad JSON: offset 0: duplicate key "label"`},
		{"a duplicate group", `{"request": {"query": "q", "chunks": []}, "label": 1, "group": "a", "group": "b"}`, `line 2: bad JSON: offset 0: duplicate key "group"`},
		{"an overflowing number", `{"request": {"query": "q", "chunks": [{"id": "a", "text": "t", "scores": {"bm25": 1e400}}]}, "label": 1}`,
			"line 2: request"},
	} {
		_, err := ReadExamples(strings.NewReader(goodLine+"\n"+c.line+"\n"), nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q...", c.name, err, c.want)
		}
	}
	if _, err := ReadExamples(strings.NewReader("\n\n"), nil); err == nil || err.Error() != "no examples" {
		t.Errorf("empty input: got %v", err)
	}
	long := `{"request": {"query": "` + strings.Repeat("x", maxLine) + `"}}`
	if _, err := ReadExamples(strings.NewReader(goodLine+"\n"+long), nil); err == nil || !strings.HasPrefix(err.Error(), "line 2: longer than") {
		t.Errorf("an over-long line: got %v", err)
	}
}

// WriteExample writes what ReadExamples reads.
func TestWriteExampleRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := WriteExample(&b, []byte(`{"query":"q","chunks":[{"id":"a","text":"t"}]}`), false, "g7"); err != nil {
		t.Fatal(err)
	}
	exs, err := ReadExamples(&b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) != 1 || exs[0].Label || exs[0].Group != "g7" || exs[0].Request.Query != "q" {
		t.Errorf("round trip gave %+v", exs)
	}
}

// Examples built in Go are checked the same way, naming the example.
func TestCalibrateRejectsHugeScores(t *testing.T) {
	w := newWorld(10, 1, 4, -2.8)
	exs := w.examples(50)
	exs[7].Request.Chunks[1].Scores.BM25, exs[7].Request.Chunks[1].Scores.HasBM25 = 1e308, true
	_, err := Calibrate(exs, Options{Target: Hallucination, Alpha: 0.2})
	if err == nil || !strings.HasPrefix(err.Error(), "example 8: request.chunks[1].scores.bm25: must be a finite number at most 1e300") {
		t.Errorf("got %v", err)
	}
}
