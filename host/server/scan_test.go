package server

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxgate/ctxgate/internal/testenv"
	"github.com/ctxgate/ctxgate/internal/testgolden"
)

// TestRequestQuery: the fast walk agrees with the full parse on every golden
// request and on awkward shapes.
func TestRequestQuery(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "requests", "*", "*.json"))
	inputs := [][]byte{
		[]byte(`{"chunks":[{"text":"a \"}]\" b"}],"query":"why \u00e9?","query_embedding":[0.1, 0.2]}`),
		[]byte(` { "x" : {"a":[1,{"b":"]"}]} , "query" : "q\\"" } `),
		[]byte(`{"qu\u0065ry":"escaped key","query":"x"}`),
		[]byte(`{}`),
		[]byte(`{"query":7}`),
		[]byte(`{"query":"q","query_embedding":[ ]}`),
	}
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		inputs = append(inputs, b)
	}
	for _, in := range inputs {
		q, e := requestQuery(in)
		wq, we := requestQuerySlow(in)
		if q != wq || !bytes.Equal(e, we) {
			t.Errorf("%.80s: got %q %s, want %q %s", in, q, e, wq, we)
		}
	}
}

func FuzzRequestQuery(f *testing.F) {
	f.Add([]byte(`{"query":"a","chunks":[]}`))
	f.Add([]byte(`{"a":"\\","query":"b"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Never panics, whatever the input; on valid JSON objects it agrees
		// with the parser about the query.
		q, _ := requestQuery(b)
		if wq, _ := requestQuerySlow(b); wq != "" && q != wq {
			if _, ok := eachTopMemberValid(b); ok {
				t.Fatalf("%q: fast %q, parser %q", b, q, wq)
			}
		}
	})
}

func eachTopMemberValid(b []byte) (int, bool) {
	n := 0
	return n, eachTopMemberRef(b, func(k, v []byte) { n++ })
}

// TestReadDecision: the member walk reads every golden decision as the full
// parser does.
func TestReadDecision(t *testing.T) {
	cases, err := testgolden.Load(filepath.Join("..", "..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		testenv.Missing(t, "no golden decisions in testdata/decisions")
	}
	for _, c := range cases {
		b, p := c.Decision, c.DecisionPath
		if b == nil {
			t.Fatalf("%s: missing (go test ./gate -run TestGolden -update)", p)
		}
		if c.IsError() {
			continue // a request the gate refuses: no decision to read
		}
		d, err := readDecision(bytes.TrimSpace(b), true)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var full struct {
			Action     string
			Confidence json.Number
			Signals    json.RawMessage
			Chunks     []struct{ ID, Tag string }
			Prompt     *struct{ Sources string }
			GapEvent   json.RawMessage `json:"gap_event"`
			Factors    []string        `json:"confidence_factors"`
			Policy     policyRef
		}
		if err := json.Unmarshal(b, &full); err != nil {
			t.Fatal(err)
		}
		if d.Action != full.Action || d.Confidence != full.Confidence || d.Policy != full.Policy ||
			!bytes.Equal(d.Signals, full.Signals) || len(d.Chunks) != len(full.Chunks) || len(d.ConfidenceFactors) != len(full.Factors) {
			t.Fatalf("%s: walk %+v differs from the parse", p, d)
		}
		if (full.Prompt == nil) != (d.Prompt == nil) || (d.Prompt != nil && d.Prompt.Sources != full.Prompt.Sources) {
			t.Fatalf("%s: prompt differs", p)
		}
		if string(full.GapEvent) != "null" && !bytes.Equal(d.GapEvent, full.GapEvent) {
			t.Fatalf("%s: gap_event differs", p)
		}
		if lite, _ := readDecision(b, false); lite.Prompt != nil {
			t.Fatalf("%s: prompt read when not asked for", p)
		}
	}
	if _, err := readDecision([]byte(`[1]`), true); err == nil {
		t.Fatal("an array read as a decision")
	}
}

// TestRequestQueryEmbeddingCompact: the embedding is copied into gap events,
// one JSON line each, so a pretty-printed request's embedding must come back
// without its line breaks, from the fast walk and the parser alike.
func TestRequestQueryEmbeddingCompact(t *testing.T) {
	in := []byte("{\n  \"query\": \"q\",\n  \"query_embedding\": [\n    0.1,\n    -2e-3\n  ],\n  \"chunks\": []\n}")
	for name, f := range map[string]func([]byte) (string, []byte){"fast": requestQuery, "parser": requestQuerySlow} {
		q, emb := f(in)
		if q != "q" || string(emb) != "[0.1,-2e-3]" {
			t.Errorf("%s: query %q embedding %q, want \"q\" [0.1,-2e-3]", name, q, emb)
		}
	}
}
