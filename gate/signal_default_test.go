package gate

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// A policy with only the default policy's two groups, so each test sees
// exactly the signals it checks.
func defaultSignalsEngine(t *testing.T, extra string) *Engine {
	t.Helper()
	doc := `{"name":"t","version":"1","signals":{"answer_coverage":{},"chunk_relevance":{}},` + extra +
		`"order_by":["chunk_relevance","answer_coverage"],"confidence":{"signal":"answer_coverage"},
	 "bands":[{"min":0.55,"label":"OK","level":"sufficient","action":"inject"},{"min":0,"label":"NO","level":"insufficient","action":"refuse"}]}`
	e, err := NewEngine([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// logistic is the reference: math.Exp here, expDet in the core. They agree
// far below the 1e-9 snap.
func logistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func answerRef(cov float64, tokens int) float64 {
	return logistic(0.3946 + 4.5741*cov - 0.1881*math.Sqrt(float64(tokens)))
}

func chunkByID(d *Decision, id string) ChunkOutcome {
	for _, c := range d.Chunks {
		if c.ID == id {
			return c
		}
	}
	return ChunkOutcome{}
}

func TestAnswerCoverage(t *testing.T) {
	e := defaultSignalsEngine(t, "")
	// Query terms: "quantum", "entanglement", "photons". "what", "is", "the"
	// are stop words; "one" is only on the coverage list and "describe" only on
	// the quality list: both lists apply. "of" is too short.
	const q = "What is the one quantum entanglement of photons? Describe"
	cases := []struct {
		name, title, text string
		cov               float64
		tokens            int
	}{
		{"all three", "", "Quantum entanglement links photons.", 1, 4},
		{"two of three", "", "quantum entanglement is strange", 2.0 / 3, 4},
		{"whole tokens only", "", "quantumness photonsx entanglement", 1.0 / 3, 3},
		// The title is not searched: it is on topic for unanswerable
		// questions too.
		{"title ignored", "Quantum photons", "entanglement " + words("filler", 99), 1.0 / 3, 100},
		{"empty text", "", "", 0, 0},
		{"stop words do not count", "", "what is the one of describe", 0, 6},
	}
	for _, c := range cases {
		d := mustDecide(t, e, &Request{Query: q, Chunks: []Chunk{{ID: "a", Title: c.title, Text: c.text}}})
		want := answerRef(c.cov, c.tokens)
		got, ok := sig(d, SigAnswerCoverage)
		if !ok || math.Abs(got-want) > 2e-9 {
			t.Errorf("%s: answer_coverage %v (reported %v) want %v", c.name, got, ok, want)
		}
		if s := d.Chunks[0].Score; s != got {
			t.Errorf("%s: without vector scores the chunk score is answer_coverage: %v vs %v", c.name, s, got)
		}
	}
	// A query with no term at all covers fully (sufficiency coverage's rule).
	d := mustDecide(t, e, &Request{Query: "what is it", Chunks: []Chunk{{ID: "a", Text: "anything here"}}})
	if got, _ := sig(d, SigAnswerCoverage); math.Abs(got-answerRef(1, 2)) > 2e-9 {
		t.Errorf("no query term: %v", got)
	}
	// Query level is the best chunk; at equal coverage the shorter text wins.
	d = mustDecide(t, e, &Request{Query: q, Chunks: []Chunk{
		{ID: "long", Text: "quantum entanglement photons " + words("filler", 397)},
		{ID: "short", Text: "quantum entanglement photons"},
		{ID: "none", Text: "nothing relevant"},
	}})
	got, _ := sig(d, SigAnswerCoverage)
	if math.Abs(got-answerRef(1, 3)) > 2e-9 || d.Chunks[0].ID != "short" || d.Chunks[1].ID != "long" {
		t.Errorf("max over chunks, ordered by answer_coverage: %v %+v", got, d.Chunks)
	}
	if d.Confidence != got || d.Action != ActionInject {
		t.Errorf("confidence is answer_coverage: %v %s", d.Confidence, d.Action)
	}
	if _, ok := sig(d, SigChunkRelevance); ok {
		t.Error("chunk_relevance reported without any vector score")
	}
	// No chunk, no signal.
	d = mustDecide(t, e, &Request{Query: q})
	if _, ok := sig(d, SigAnswerCoverage); ok || len(d.Signals) != 0 {
		t.Errorf("no chunk: signals %+v", d.Signals)
	}
}

func TestChunkRelevance(t *testing.T) {
	e := defaultSignalsEngine(t, "")
	both := func(v, b float64) Scores { return Scores{Vector: v, HasVector: true, BM25: b, HasBM25: true} }
	d := mustDecide(t, e, &Request{Query: "q", Chunks: []Chunk{
		{ID: "top", Scores: vec(0.90)},
		{ID: "mid-both", Scores: both(0.86, 12)},
		{ID: "low", Scores: vec(0.80)},
		{ID: "bm25-only", Scores: Scores{BM25: 30, HasBM25: true}},
	}})
	ref := func(v float64, b float64) float64 {
		return logistic(-9.7964 + 11.2182*v - 44.8727*(0.90-v) + 1.3228*b)
	}
	want := map[string]float64{
		"top": ref(0.90, 0), "mid-both": ref(0.86, 1), "low": ref(0.80, 0),
		"bm25-only": ref(0.90-0.05, 0), // missing_gap below the top, not at the lowest
	}
	for id, w := range want {
		if got := chunkByID(d, id).Score; math.Abs(got-w) > 2e-9 {
			t.Errorf("%s: chunk_relevance %v want %v", id, got, w)
		}
	}
	if got, ok := sig(d, SigChunkRelevance); !ok || math.Abs(got-want["top"]) > 2e-9 {
		t.Errorf("query level is the best chunk: %v %v", got, ok)
	}
	if got := d.Chunks[0].ID; got != "top" {
		t.Errorf("S1 should be the top chunk, got %s", got)
	}
	// Request size does not move a chunk's score: the same four chunks
	// followed by sixteen weaker ones (a request of 20 instead of 4) score
	// exactly as before. Version 2's gap to the request's lowest broke this.
	long := []Chunk{{ID: "top", Scores: vec(0.90)}, {ID: "mid-both", Scores: both(0.86, 12)},
		{ID: "low", Scores: vec(0.80)}, {ID: "bm25-only", Scores: Scores{BM25: 30, HasBM25: true}}}
	for i := 0; i < 16; i++ {
		long = append(long, Chunk{ID: "weak" + strconv.Itoa(i), Scores: vec(0.70 - 0.01*float64(i))})
	}
	d20 := mustDecide(t, e, &Request{Query: "q", Chunks: long})
	for id := range want {
		if got := chunkByID(d20, id).Score; got != chunkByID(d, id).Score {
			t.Errorf("%s: 20 chunks changed the score %v -> %v", id, chunkByID(d, id).Score, got)
		}
	}
	// The absolute level counts a little: the same request 0.05 lower keeps
	// its order but every chunk scores lower.
	d2 := mustDecide(t, e, &Request{Query: "q", Chunks: []Chunk{
		{ID: "top", Scores: vec(0.85)}, {ID: "mid-both", Scores: both(0.81, 12)},
		{ID: "low", Scores: vec(0.75)}, {ID: "bm25-only", Scores: Scores{BM25: 30, HasBM25: true}},
	}})
	for i, c := range d.Chunks {
		got := d2.Chunks[i]
		if got.ID != c.ID || !(got.Score < c.Score) {
			t.Errorf("shifted down: chunk %d is %s %v, was %s %v", i, got.ID, got.Score, c.ID, c.Score)
		}
	}
}

// relevance_min drops chunks below it; if it would drop every chunk, all
// are kept and say so (a mostly relative score cannot tell that every chunk
// is bad: one vector-only chunk at cosine 0.8 scores 0.31).
func TestRelevanceFilter(t *testing.T) {
	e := defaultSignalsEngine(t, `"filters":{"relevance_min":0.35},`)
	d := mustDecide(t, e, &Request{Query: "quantum photons", Chunks: []Chunk{
		{ID: "bad", Text: "quantum photons", Scores: vec(0.70)},
		{ID: "good", Text: "nothing", Scores: vec(0.90)},
	}})
	g, b := chunkByID(d, "good"), chunkByID(d, "bad")
	if !g.Kept || g.Tag != "S1" || b.Kept || b.Reason != ReasonRelevanceLow || b.Tag != "" {
		t.Fatalf("filter: %+v", d.Chunks)
	}
	// The confidence is the best chunk's answer_coverage over all chunks,
	// dropped or not, so the filter never lowers it.
	if got, _ := sig(d, SigAnswerCoverage); d.Confidence != got || got < answerRef(1, 2)-2e-9 {
		t.Errorf("confidence %v answer_coverage %v", d.Confidence, got)
	}
	d = mustDecide(t, e, &Request{Query: "quantum photons", Chunks: []Chunk{{ID: "only", Text: "quantum photons", Scores: vec(0.8)}}})
	if c := d.Chunks[0]; !c.Kept || c.Reason != ReasonRelevanceFallback || c.Tag != "S1" || !(c.Score < 0.35) {
		t.Fatalf("global fallback: %+v", c)
	}
	if d.Action != ActionInject || d.Prompt == nil || !strings.Contains(d.Prompt.Sources, "[S1]") {
		t.Fatalf("a fallback-kept chunk reaches the prompt: %+v", d)
	}
}

// order_by as a list: the first ordering whose inputs the request has.
func TestOrderByList(t *testing.T) {
	doc := strings.Replace(minimalPolicy, `"name":"p",`, `"name":"p","order_by":["retrieval_score","vector","input"],`, 1)
	// Low similarity must not fire the gate here: a fallback keeps no chunk,
	// so it would list them all in input order.
	doc = strings.Replace(doc, `"action":"fallback"`, `"action":"caveat"`, 1)
	e, err := NewEngine([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	ids := func(d *Decision) string {
		var s []string
		for _, c := range d.Chunks {
			s = append(s, c.ID)
		}
		return strings.Join(s, ",")
	}
	rr := func(v float64) Scores { return Scores{RRF: v, HasRRF: true} }
	cases := []struct {
		chunks []Chunk
		want   string
	}{
		{[]Chunk{{ID: "a", Scores: rr(0.1)}, {ID: "b", Scores: rr(0.3)}}, "b,a"},
		{[]Chunk{{ID: "a", Scores: vec(0.1)}, {ID: "b", Scores: vec(0.3)}}, "b,a"}, // vector is a retrieval score too
		{[]Chunk{{ID: "a", Scores: Scores{BM25: 1, HasBM25: true}}, {ID: "b", Scores: Scores{BM25: 9, HasBM25: true}}}, "a,b"},
		{[]Chunk{{ID: "a"}, {ID: "b"}, {ID: "c"}}, "a,b,c"},
	}
	for i, c := range cases {
		d := mustDecide(t, e, &Request{Query: "q", Chunks: c.chunks})
		if got := ids(d); got != c.want {
			t.Errorf("case %d: order %s want %s", i, got, c.want)
		}
		if i >= 2 && d.Chunks[0].Score != 0 {
			t.Errorf("case %d: input order scores 0, got %v", i, d.Chunks[0].Score)
		}
	}
}

// chunk_relevance's knobs fail with the field named: version 2's above_low
// is rejected (not ignored), missing_gap and vector are bounded.
func TestChunkRelevanceKnobErrors(t *testing.T) {
	base := `{"name":"p","version":"1","signals":{"chunk_relevance":%s},"order_by":"chunk_relevance",` +
		`"confidence":{"signal":"chunk_relevance"},"bands":[{"min":0,"label":"X","level":"insufficient","action":"refuse"}]}`
	for _, c := range []struct{ knobs, field, msg string }{
		{`{"bias":-0.7525,"below_top":-45.0804,"above_low":27.3124,"both":1.3156}`, "signals.chunk_relevance.above_low", "was removed"},
		{`{"missing_gap":1.5}`, "signals.chunk_relevance.missing_gap", "[0,1]"},
		{`{"missing_gap":-0.1}`, "signals.chunk_relevance.missing_gap", "[0,1]"},
		{`{"vector":250}`, "signals.chunk_relevance.vector", "[-100,100]"},
		{`{"vector":"x"}`, "signals.chunk_relevance.vector", "must be"},
	} {
		_, err := NewEngine([]byte(strings.Replace(base, "%s", c.knobs, 1)))
		ge, ok := err.(*Error)
		if !ok || ge.Code != CodeBadPolicy || ge.Field != c.field || !strings.Contains(ge.Message, c.msg) {
			t.Errorf("%s: got %v, want bad_policy at %s containing %q", c.knobs, err, c.field, c.msg)
		}
	}
	// The knobs apply: vector 0 and missing_gap 0.2 give the relative form.
	e, err := NewEngine([]byte(strings.Replace(base, "%s", `{"bias":0,"vector":0,"below_top":-10,"both":0,"missing_gap":0.2}`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	d := mustDecide(t, e, &Request{Query: "q", Chunks: []Chunk{{ID: "a", Scores: vec(0.4)}, {ID: "b", Scores: Scores{BM25: 3, HasBM25: true}}}})
	if a, b := chunkByID(d, "a").Score, chunkByID(d, "b").Score; math.Abs(a-0.5) > 1e-9 || math.Abs(b-logistic(-2)) > 2e-9 {
		t.Errorf("scores a %v b %v, want 0.5 and %v", a, b, logistic(-2))
	}
}
