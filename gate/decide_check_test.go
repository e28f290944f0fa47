package gate

import (
	"errors"
	"math"
	"testing"

	"github.com/ctxgate/ctxgate/gate/internal/jsonread"
)

// Decide's own request check (for Go hosts; JSON requests are checked by
// the decoder first): each bad field is named with its full path, in chunks
// and in results_per_query, exactly as before the path was built lazily.
func TestDecideCheckNamesTheField(t *testing.T) {
	e, err := NewEngine(nil)
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	good := Chunk{ID: "g", Text: "fine"}
	cases := []struct {
		name        string
		bad         Chunk
		emb         []float64
		field, msg  string
		inRPQ       bool
		rpqIdx, pos int
	}{
		{"vector", Chunk{Scores: Scores{Vector: nan, HasVector: true}}, nil, ".scores.vector", "must be a finite number", false, 0, 1},
		{"bm25", Chunk{Scores: Scores{BM25: math.Inf(1), HasBM25: true}}, nil, ".scores.bm25", "must be a finite number", false, 0, 1},
		{"rerank", Chunk{Scores: Scores{Rerank: nan, HasRerank: true}}, nil, ".scores.rerank", "must be a finite number", false, 0, 1},
		{"rrf", Chunk{Scores: Scores{RRF: nan, HasRRF: true}}, nil, ".scores.rrf", "must be a finite number", false, 0, 1},
		{"boosted", Chunk{Scores: Scores{Boosted: nan, HasBoosted: true}}, nil, ".scores.boosted", "must be a finite number", false, 0, 1},
		{"graph", Chunk{Scores: Scores{Graph: math.Inf(-1), HasGraph: true}}, nil, ".scores.graph", "must be a finite number", false, 0, 1},
		{"sparse", Chunk{Scores: Scores{Sparse: math.Inf(1), HasSparse: true}}, nil, ".scores.sparse", "must be a finite number", false, 0, 1},
		{"vector before bm25", Chunk{Scores: Scores{Vector: nan, HasVector: true, BM25: nan, HasBM25: true}}, nil, ".scores.vector", "must be a finite number", false, 0, 1},
		{"absent score ignored, trust", Chunk{Scores: Scores{Vector: nan}, Trust: 1.5, HasTrust: true}, nil, ".trust", "must be in [0,1]", false, 0, 1},
		{"temperature", Chunk{Temperature: -1, HasTemperature: true}, nil, ".temperature", "must be a finite number >= 0", false, 0, 1},
		{"embedding dims", Chunk{Embedding: []float64{1, 2, 3}}, []float64{1, 0}, ".embedding", "has 3 dimensions, query_embedding has 2", false, 0, 1},
		{"embedding value", Chunk{Embedding: []float64{1, nan}}, []float64{1, 0}, ".embedding[1]", "must be a finite number", false, 0, 1},
		{"in results_per_query", Chunk{Scores: Scores{RRF: nan, HasRRF: true}}, nil, ".scores.rrf", "must be a finite number", true, 1, 1},
		{"embedding in results_per_query", Chunk{Embedding: []float64{nan}}, nil, ".embedding[0]", "must be a finite number", true, 0, 1},
	}
	for _, c := range cases {
		req := &Request{Query: "q", QueryEmbedding: c.emb}
		want := "chunks[1]" + c.field
		if c.inRPQ {
			lists := make([][]Chunk, c.rpqIdx+1)
			for i := range lists {
				lists[i] = []Chunk{good, good}
			}
			lists[c.rpqIdx][c.pos] = c.bad
			req.ResultsPerQuery = lists
			want = jsonread.Idx(jsonread.Idx("results_per_query", c.rpqIdx, ""), c.pos, "") + c.field
		} else {
			req.Chunks = []Chunk{good, c.bad}
		}
		_, err := e.Decide(req)
		var ge *Error
		if !errors.As(err, &ge) {
			t.Fatalf("%s: want *Error, got %v", c.name, err)
		}
		if ge.Code != CodeBadField || ge.Field != want || ge.Message != c.msg {
			t.Errorf("%s: got %s %q %q, want %s %q %q", c.name, ge.Code, ge.Field, ge.Message, CodeBadField, want, c.msg)
		}
	}
}

// TestDecideBlankQuery: Decide refuses a query of only zero-width, control
// or space characters as it refuses an empty one.
func TestDecideBlankQuery(t *testing.T) {
	e, err := NewEngine(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"", " ", "\u200b\u200d", "\x00\x00", "\ufeff \u2060\u0085"} {
		var ge *Error
		if _, err := e.Decide(&Request{Query: q}); !errors.As(err, &ge) || ge.Field != "query" || ge.Message != "must not be empty" {
			t.Errorf("query %q: %v", q, err)
		}
	}
	if _, err := e.Decide(&Request{Query: "\u200bq"}); err != nil {
		t.Errorf("a query with a letter: %v", err)
	}
}
