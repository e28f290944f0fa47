package gate

import (
	"bytes"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/policies"
)

var vocab = strings.Fields("password reset account billing invoice photosynthesis light energy chlorophyll " +
	"goroutine scheduler thread the and of to in is what how why 東京 人口 données été москва 2024 v1.2 " +
	"<sources> </sources> [S1] [S2, S3] \" \\ \n \t — … 🙂")

func randText(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(vocab[r.Intn(len(vocab))])
		b.WriteByte(' ')
	}
	return b.String()
}

// randRequest builds a random request. hybrid forces vector and bm25 on
// every chunk (the shape the monotonicity property is stated for).
func randRequest(r *rand.Rand, hybrid bool) *Request {
	req := &Request{Query: randText(r, 1+r.Intn(8)) + "x"}
	n := r.Intn(12)
	dims := 0
	if r.Intn(3) == 0 {
		dims = 1 + r.Intn(4)
		for i := 0; i < dims; i++ {
			req.QueryEmbedding = append(req.QueryEmbedding, r.NormFloat64())
		}
	}
	if r.Intn(2) == 0 {
		req.HasNow, req.NowSec = true, 1_700_000_000
	}
	for i := 0; i < n; i++ {
		c := Chunk{ID: "c" + string(rune('a'+i)), DocID: "d" + string(rune('a'+r.Intn(4))), Title: randText(r, r.Intn(3)),
			Text: randText(r, r.Intn(80)), Untrusted: r.Intn(5) == 0}
		s := &c.Scores
		if hybrid {
			s.Vector, s.HasVector = r.Float64()*1.1-0.2, true // < 0.9 so a better chunk can strictly outrank
		} else if r.Intn(4) > 0 {
			s.Vector, s.HasVector = r.Float64()*1.2-0.2, true // a cosine: above 1 is an error
		}
		if hybrid || r.Intn(2) == 0 {
			s.BM25, s.HasBM25 = r.Float64()*30-1, true
		}
		if !hybrid {
			if r.Intn(3) == 0 {
				s.Rerank, s.HasRerank = r.Float64()*3-1, true
			}
			if r.Intn(3) == 0 {
				s.RRF, s.HasRRF = r.Float64()*0.05, true
			}
			if r.Intn(4) == 0 {
				s.Boosted, s.HasBoosted = r.Float64(), true
			}
			if r.Intn(4) == 0 {
				s.Graph, s.HasGraph = r.Float64()-0.3, true
			}
			if r.Intn(3) == 0 {
				c.Trust, c.HasTrust = r.Float64(), true
			}
			if r.Intn(3) == 0 {
				c.UpdatedSec, c.HasUpdated = 1_700_000_000-int64(r.Intn(1e8))+1e7, true
			}
			if r.Intn(4) == 0 {
				c.Temperature, c.HasTemperature = r.Float64()*80, true
			}
		}
		if dims > 0 && r.Intn(2) == 0 {
			for j := 0; j < dims; j++ {
				c.Embedding = append(c.Embedding, r.NormFloat64())
			}
		}
		req.Chunks = append(req.Chunks, c)
	}
	return req
}

func allEngines(t testing.TB) map[string]*Engine {
	m := map[string]*Engine{}
	for _, n := range policies.Names() {
		m[n] = presetEngine(t, n)
	}
	return m
}

func unitOK(x float64) bool { return x >= 0 && x <= 1 && !math.IsNaN(x) }

// Every score a decision carries lies in [0,1], for every preset.
func TestPropertyScoresInUnitInterval(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	engines := allEngines(t)
	for i := 0; i < 400; i++ {
		req := randRequest(r, false)
		for name, e := range engines {
			d := mustDecide(t, e, req)
			check := func(what string, v float64) {
				if !unitOK(v) {
					t.Fatalf("%s case %d: %s = %v", name, i, what, v)
				}
			}
			check("confidence", d.Confidence)
			for _, s := range d.Signals {
				check(s.Name, s.Value)
			}
			for _, c := range d.Chunks {
				check("chunk score", c.Score)
				check("quality", c.Quality)
				check("vector", c.Vector)
				check("bm25", c.BM25)
				check("fused", c.Fused)
			}
			if g := d.GapEvent; g != nil {
				check("gap confidence", g.Confidence)
				if len(g.TopChunks) > 5 {
					t.Fatalf("gap event holds %d chunks", len(g.TopChunks))
				}
				for _, c := range g.TopChunks {
					check("gap chunk", c.Score)
				}
			}
		}
	}
}

// Adding a chunk that outranks every other on every input (strictly higher
// vector and BM25 scores, all query terms, long text) never lowers the
// confidence. This holds for wikigr (a max), sufficient-context (coverage,
// relevance, density and count only grow when temperatures are equal),
// support-agent (the new chunk's evidence dominates every other chunk's,
// without freshness or trust) and default, when the newcomer comes from a
// document the request already holds and the request already carried both
// kinds of retriever score and enough of the query's terms for the scored
// model: its answerability then rises with mean term coverage and retriever
// agreement, and neither falls. (A chunk from a new document lowers
// default's doc_concentration, and a first chunk with both kinds of score,
// or the first on topic, hands the decision to the scored model: both by
// design.)
// A tie in a ranking is not enough: RRF breaks ties by input order, so a
// tied newcomer can lower the old top chunk's fused score a little.
// It does not hold for rag-confidence: its gap, spread and diversity
// terms can drop when a second strong chunk arrives, by design.
func TestPropertyRelevantChunkNeverLowersConfidence(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	engines := allEngines(t)
	for i := 0; i < 400; i++ {
		req := randRequest(r, true)
		maxV, maxB := 0.0, 0.0
		for _, c := range req.Chunks {
			maxV = math.Max(maxV, c.Scores.Vector)
			maxB = math.Max(maxB, c.Scores.BM25)
		}
		doc, lex, sem := "dz", false, false
		if len(req.Chunks) > 0 {
			doc = req.Chunks[0].DocID
		}
		for _, c := range req.Chunks {
			lex = lex || c.Scores.HasBM25
			sem = sem || c.Scores.HasVector || c.Scores.HasSparse
		}
		rel := Chunk{ID: "relevant", DocID: doc, Text: strings.Repeat(req.Query+" ", 40),
			Scores: Scores{Vector: math.Min(1, maxV+0.01), HasVector: true, BM25: maxB + 1, HasBM25: true}}
		if len(req.QueryEmbedding) > 0 {
			rel.Embedding = append([]float64(nil), req.QueryEmbedding...)
		}
		more := *req
		more.Chunks = append(append([]Chunk(nil), req.Chunks...), rel)
		for _, name := range []string{"wikigr", "sufficient-context", "support-agent", "default"} {
			if name == "default" && !(lex && sem && scoredDecides(t, engines[name], req)) {
				continue
			}
			e := engines[name]
			before := mustDecide(t, e, req).Confidence
			after := mustDecide(t, e, &more).Confidence
			if after < before {
				t.Fatalf("%s case %d: confidence fell from %v to %v", name, i, before, after)
			}
		}
	}
}

// Same input, same bytes: re-running, a fresh engine, and an engine whose
// scratch holds a previous larger request all give identical output.
func TestPropertyDeterministic(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(goldenRoot, "requests", "*", "*.json"))
	r := rand.New(rand.NewSource(3))
	for _, name := range policies.Names() {
		e := presetEngine(t, name)
		for _, f := range files {
			req, _ := os.ReadFile(f)
			a, errA := e.Evaluate(req)
			_, _ = e.Decide(randRequest(r, false)) // dirty the scratch
			b, errB := e.Evaluate(req)
			c, errC := presetEngine(t, name).Evaluate(req)
			if (errA == nil) != (errB == nil) || (errA == nil) != (errC == nil) || !bytes.Equal(a, b) || !bytes.Equal(a, c) {
				t.Fatalf("%s on %s: output differs between runs", name, f)
			}
		}
	}
}

// Hostile input never panics: non-finite numbers are errors naming the
// field, and mutated JSON is either decided or rejected.
func TestPropertyHostileNeverPanics(t *testing.T) {
	e := presetEngine(t, "default")
	bad := []struct {
		req   Request
		field string
	}{
		{Request{Query: "  "}, "query"},
		{Request{Query: "q", Chunks: []Chunk{{Scores: Scores{Vector: math.NaN(), HasVector: true}}}}, "chunks[0].scores.vector"},
		{Request{Query: "q", Chunks: []Chunk{{}, {Scores: Scores{BM25: math.Inf(1), HasBM25: true}}}}, "chunks[1].scores.bm25"},
		{Request{Query: "q", Chunks: []Chunk{{Trust: 2, HasTrust: true}}}, "chunks[0].trust"},
		{Request{Query: "q", QueryEmbedding: []float64{1, 2}, Chunks: []Chunk{{Embedding: []float64{1}}}}, "chunks[0].embedding"},
		{Request{Query: "q", QueryEmbedding: []float64{math.NaN()}}, "query_embedding[0]"},
		{Request{Query: "q", Chunks: []Chunk{{}}, ResultsPerQuery: [][]Chunk{{}}}, "results_per_query"},
		{Request{Query: "q", ResultsPerQuery: [][]Chunk{{{}}, {{Scores: Scores{Graph: math.NaN(), HasGraph: true}}}}}, "results_per_query[1][0].scores.graph"},
	}
	for i, c := range bad {
		_, err := e.Decide(&c.req)
		ge, ok := err.(*Error)
		if !ok || ge.Code != CodeBadField || ge.Field != c.field {
			t.Errorf("case %d: got %v, want bad_field at %s", i, err, c.field)
		}
	}
	if _, err := e.Decide(nil); err == nil {
		t.Error("nil request must be an error")
	}
	files, _ := filepath.Glob(filepath.Join(goldenRoot, "requests", "*", "*.json"))
	r := rand.New(rand.NewSource(4))
	engines := allEngines(t)
	junk := []string{"", "null", "-1e309", "1e308", "\"\\u0000\"", "[]", "{}", "\"</sources>\"", "NaN", "0"}
	for i := 0; i < 3000; i++ {
		src, _ := os.ReadFile(files[r.Intn(len(files))])
		b := append([]byte(nil), src...)
		switch r.Intn(3) {
		case 0: // flip a byte
			if len(b) > 0 {
				b[r.Intn(len(b))] = byte(r.Intn(256))
			}
		case 1: // splice junk in
			p := r.Intn(len(b) + 1)
			b = append(b[:p], append([]byte(junk[r.Intn(len(junk))]), b[p:]...)...)
		case 2: // truncate
			b = b[:r.Intn(len(b)+1)]
		}
		for _, e := range engines {
			out, err := e.Evaluate(b)
			if err == nil && len(out) == 0 {
				t.Fatal("empty output without error")
			}
		}
	}
}

// scoredDecides tells whether the default policy's scored answerability
// model decides req (its best chunk covers enough of the query).
func scoredDecides(t *testing.T, e *Engine, req *Request) bool {
	fs, err := e.Features(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Name == "term_coverage_best" {
			return f.Value >= e.Policy().Answerability.ScoredMinCoverage
		}
	}
	return false
}
