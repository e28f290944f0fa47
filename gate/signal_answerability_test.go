package gate

import (
	"math"
	"strings"
	"testing"
)

func features(t *testing.T, e *Engine, req *Request) map[string]float64 {
	t.Helper()
	fs, err := e.Features(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != len(FeatureNames) {
		t.Fatalf("Features gave %d features, want %d", len(fs), len(FeatureNames))
	}
	m := map[string]float64{}
	for i, f := range fs {
		if f.Name != FeatureNames[i] {
			t.Fatalf("feature %d is %q, want %q", i, f.Name, FeatureNames[i])
		}
		if f.Value < 0 || f.Value > 1 || math.IsNaN(f.Value) {
			t.Fatalf("%s = %v, outside [0,1]", f.Name, f.Value)
		}
		m[f.Name] = f.Value
	}
	return m
}

func TestAnswerabilityFeatures(t *testing.T) {
	e := presetEngine(t, "default")
	bm := func(x float64) Scores { return Scores{BM25: x, HasBM25: true} }
	both := func(v, b float64) Scores { return Scores{Vector: v, HasVector: true, BM25: b, HasBM25: true} }
	sparse := func(s, b float64) Scores { return Scores{Sparse: s, HasSparse: true, BM25: b, HasBM25: true} }
	for _, c := range []struct {
		name   string
		query  string
		chunks []Chunk
		want   map[string]float64
	}{
		{"one chunk: no concentration, coverage of its text", "reset password link",
			[]Chunk{{DocID: "a", Text: "reset the password"}},
			map[string]float64{"doc_concentration": 0, "term_coverage_best": 0.666667, "term_coverage_mean": 0.666667,
				"retriever_agreement": 0, "lexical_spread": 0}},
		{"same document twice, one other, one without doc_id", "reset password",
			[]Chunk{{DocID: "a", Text: "reset"}, {DocID: "a", Text: "password reset"}, {DocID: "b", Text: "x"}, {Text: "y"}},
			map[string]float64{"doc_concentration": 0.333333, "term_coverage_best": 1, "term_coverage_mean": 0.375}},
		{"chunks without doc_id are documents apart", "q",
			[]Chunk{{Text: "a"}, {Text: "b"}, {Text: "c"}},
			map[string]float64{"doc_concentration": 0}},
		{"bm25 alone: no agreement, a spread", "reset",
			[]Chunk{{Text: "reset", Scores: bm(3)}, {Text: "x", Scores: bm(1)}},
			map[string]float64{"retriever_agreement": 0, "lexical_spread": 0.333333, "top_bm25": 0.230769, "top_vector": 0}},
		{"vector and bm25: agreement is the share with both", "reset",
			[]Chunk{{Text: "reset", Scores: both(0.8, 4)}, {Text: "x", Scores: Scores{Vector: 0.6, HasVector: true}},
				{Text: "y", Scores: bm(2)}, {Text: "z", Scores: both(0.5, 2)}},
			map[string]float64{"retriever_agreement": 0.5, "top_vector": 0.8}},
		{"sparse stands in for vector, and its spread is scale-free", "reset",
			[]Chunk{{Text: "reset", Scores: sparse(3e6, 10)}, {Text: "x", Scores: sparse(1e6, 10)}},
			map[string]float64{"retriever_agreement": 1, "semantic_spread": 0.333333, "lexical_spread": 0, "top_sparse": 1}},
		{"the same sparse scores a million times smaller spread the same", "reset",
			[]Chunk{{Text: "reset", Scores: sparse(3, 10)}, {Text: "x", Scores: sparse(1, 10)}},
			map[string]float64{"semantic_spread": 0.333333, "top_sparse": 0.75}},
		{"no query term: nothing is missing", "the of",
			[]Chunk{{Text: "anything"}},
			map[string]float64{"term_coverage_best": 1, "term_coverage_mean": 1}},
	} {
		got := features(t, e, &Request{Query: c.query, Chunks: c.chunks})
		for k, v := range c.want {
			if math.Abs(got[k]-v) > 1e-6 {
				t.Errorf("%s: %s = %v, want %v", c.name, k, got[k], v)
			}
		}
	}
	if _, err := e.Features(&Request{Query: " "}); err == nil {
		t.Error("Features of a blank query: want the request's error")
	}
}

// The scored model decides only requests with both kinds of score whose
// best chunk covers enough of the query; the text model decides the rest,
// and a decision reports the deciding model's features.
func TestAnswerabilityModelChoice(t *testing.T) {
	e := presetEngine(t, "default")
	on := Chunk{ID: "a", DocID: "a", Text: "To reset your password open Settings", Scores: Scores{Vector: 0.8, HasVector: true, BM25: 9, HasBM25: true}}
	off := Chunk{ID: "b", DocID: "b", Text: "Invoices are issued monthly", Scores: Scores{Vector: 0.2, HasVector: true, BM25: 1, HasBM25: true}}
	textOnly := Chunk{ID: "c", DocID: "c", Text: "To reset your password open Settings"}
	for _, c := range []struct {
		name   string
		chunks []Chunk
		scored bool
	}{
		{"both kinds, on topic", []Chunk{on, off}, true},
		{"both kinds, off topic", []Chunk{off}, false},
		{"text only", []Chunk{textOnly}, false},
	} {
		d, err := e.Decide(&Request{Query: "How do I reset my password?", Chunks: c.chunks})
		if err != nil {
			t.Fatal(err)
		}
		names := []string{}
		for _, s := range d.Signals {
			names = append(names, s.Name)
		}
		got := strings.Contains(strings.Join(names, ","), "retriever_agreement")
		if got != c.scored {
			t.Errorf("%s: scored model = %v, want %v (signals %v)", c.name, got, c.scored, names)
		}
		if names[len(names)-1] != SigAnswerability {
			t.Errorf("%s: answerability is not the last signal: %v", c.name, names)
		}
	}
}

// AnswerabilityFeatures names the model Decide applies: the default's
// scored model reports retriever_agreement, its text model does not.
func TestAnswerabilityFeaturesModel(t *testing.T) {
	e := presetEngine(t, "default")
	both := Scores{Vector: 0.8, HasVector: true, BM25: 4, HasBM25: true}
	for _, c := range []struct {
		name   string
		query  string
		chunks []Chunk
		scored bool
	}{
		{"text alone", "reset password", []Chunk{{Text: "reset the password"}}, false},
		{"vector alone", "reset password", []Chunk{{Text: "reset the password", Scores: Scores{Vector: 0.8, HasVector: true}}}, false},
		{"both scores, on topic", "reset password", []Chunk{{Text: "reset the password", Scores: both}}, true},
		{"both scores, off topic", "reset password", []Chunk{{Text: "unrelated words", Scores: both}}, false},
		{"bm25 and sparse on different chunks", "reset password",
			[]Chunk{{Text: "reset password", Scores: Scores{BM25: 3, HasBM25: true}}, {Text: "x", Scores: Scores{Sparse: 9, HasSparse: true}}}, true},
	} {
		req := &Request{Query: c.query, Chunks: c.chunks}
		_, scored, err := e.AnswerabilityFeatures(req)
		if err != nil {
			t.Fatal(err)
		}
		d, err := e.Decide(req)
		if err != nil {
			t.Fatal(err)
		}
		decided := false
		for _, s := range d.Signals {
			decided = decided || s.Name == "retriever_agreement"
		}
		if scored != c.scored || decided != c.scored {
			t.Errorf("%s: AnswerabilityFeatures scored = %v, Decide used the scored model = %v, want %v", c.name, scored, decided, c.scored)
		}
	}
}
