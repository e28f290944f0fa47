package gate

import (
	"strings"
	"testing"
)

// The retrieval-enhancements document's section-quality table, row by row.
func TestSectionQualityTable(t *testing.T) {
	rows := []struct {
		words, matched, keywords int
		want                     float64
	}{
		{19, 2, 2, 0},    // < 20: stub cutoff
		{20, 0, 0, 0.26}, // 0/0 or all stop words
		{50, 0, 3, 0.35},
		{50, 3, 3, 0.55},
		{100, 0, 3, 0.50},
		{200, 0, 3, 0.80},
		{200, 3, 3, 1.0},
		{1000, 1, 2, 0.9},
	}
	for _, r := range rows {
		got := sectionQuality(r.words, r.matched, r.keywords, 20)
		if !near(got, r.want) {
			t.Errorf("wc=%d %d/%d: got %v want %v", r.words, r.matched, r.keywords, got, r.want)
		}
		if got < 0 || got > 1 {
			t.Errorf("out of [0,1]: %v", got)
		}
	}
}

// The section-quality examples, through the tokenizer and the engine.
func TestSectionQualityExamples(t *testing.T) {
	e := presetEngine(t, "wikigr")
	cases := []struct {
		text, q string
		want    float64
	}{
		{"See also.", "quantum entanglement", 0},
		{words("word", 50), "quantum entanglement", 0.35},
		{words("quantum entanglement", 100), "quantum entanglement", 1.0},
		// Accident fixed: punctuation no longer sticks to words.
		{words("filler", 48) + " photosynthesis, chlorophyll!", "photosynthesis? chlorophyll?", 0.55},
	}
	for _, c := range cases {
		d := mustDecide(t, e, &Request{Query: c.q, Chunks: []Chunk{{ID: "a", Text: c.text, Scores: vec(0.9)}}})
		if got := d.Chunks[0].Quality; !near(got, c.want) {
			t.Errorf("%q / %q: quality %v want %v", c.text[:min(20, len(c.text))], c.q, got, c.want)
		}
	}
}

// Quality filter: strictly below 0.3 is dropped; if all are, all are kept
// and say so.
func TestQualityFilterAndGlobalFallback(t *testing.T) {
	e := presetEngine(t, "wikigr")
	good := words("quantum", 40)
	d := mustDecide(t, e, &Request{Query: "quantum physics", Chunks: []Chunk{
		{ID: "stub", Text: "See also.", Scores: vec(0.9)},
		{ID: "good", Text: good, Scores: vec(0.7)},
	}})
	if d.Chunks[0].ID != "good" || !d.Chunks[0].Kept || d.Chunks[0].Tag != "S1" {
		t.Fatalf("good chunk should be S1: %+v", d.Chunks)
	}
	if d.Chunks[1].ID != "stub" || d.Chunks[1].Kept || d.Chunks[1].Reason != ReasonQualityLow {
		t.Fatalf("stub should be dropped: %+v", d.Chunks[1])
	}
	d = mustDecide(t, e, &Request{Query: "quantum physics", Chunks: []Chunk{
		{ID: "s1", Text: "See also.", Scores: vec(0.9)},
		{ID: "s2", Text: "References.", Scores: vec(0.8)},
	}})
	for _, c := range d.Chunks {
		if !c.Kept || c.Reason != ReasonQualityFallback {
			t.Fatalf("global fallback should keep all: %+v", c)
		}
	}
}

// The confidence gate: max similarity >= 0.5 injects; below falls back with the exact
// minimal prompt and keeps no chunk (the document's `sources: []`); a chunk
// without a vector counts 0; no chunks is vector_fallback. Values are
// snapped to 9 decimals before the threshold compares them, so 0.499999999
// fires and 0.4999999999 does not (docs/policy.md).
func TestMaxSimilarityGate(t *testing.T) {
	e := presetEngine(t, "wikigr")
	text := words("goroutine scheduling", 30)
	cases := []struct {
		scores []Scores
		action Action
		qt     string
	}{
		{[]Scores{vec(0.5)}, ActionInject, QueryTypeVectorSearch},
		{[]Scores{vec(0.500000001), vec(0.2)}, ActionInject, QueryTypeVectorSearch},
		{[]Scores{vec(0.95), vec(0.1)}, ActionInject, QueryTypeVectorSearch},
		{[]Scores{vec(0.499999999), vec(0.2)}, ActionFallback, QueryTypeGatedFallback},
		{[]Scores{vec(0.4999999999)}, ActionInject, QueryTypeVectorSearch},
		{[]Scores{vec(0.4999999)}, ActionFallback, QueryTypeGatedFallback},
		{[]Scores{{}}, ActionFallback, QueryTypeGatedFallback},
		{nil, ActionFallback, QueryTypeVectorFallback},
	}
	for i, c := range cases {
		var chunks []Chunk
		for j, s := range c.scores {
			chunks = append(chunks, Chunk{ID: string(rune('a' + j)), Text: text, Scores: s})
		}
		if c.action == ActionFallback && len(chunks) > 0 {
			// A stub the quality filter would drop: the gate's reason wins,
			// as the original never fetched sections once the gate fired.
			chunks = append(chunks, Chunk{ID: "stub", Text: "See also.", Scores: vec(0.1)})
		}
		d := mustDecide(t, e, &Request{Query: "What is goroutine scheduling?", Chunks: chunks})
		if d.Action != c.action || d.QueryType != c.qt {
			t.Errorf("case %d: got %s/%s want %s/%s", i, d.Action, d.QueryType, c.action, c.qt)
		}
		for _, o := range d.Chunks {
			if gated := d.Action == ActionFallback; o.Kept == gated || (o.Tag == "") != gated ||
				(gated && o.Reason != ReasonGateFired) {
				t.Errorf("case %d: chunk %+v in a %s decision", i, o, d.Action)
			}
		}
		if d.Action == ActionFallback {
			want := "The knowledge pack for this query contained no relevant content. Answer the following question using your own expertise:\n\nQuestion: What is goroutine scheduling?"
			if d.Prompt == nil || d.Prompt.Minimal != want || d.Prompt.Sources != "" || d.Prompt.Instructions != "" {
				t.Errorf("case %d: minimal prompt %+v", i, d.Prompt)
			}
			if len(d.Chunks) > 0 && d.Chunks[0].ID != "a" {
				t.Errorf("case %d: dropped chunks should keep input order: %+v", i, d.Chunks)
			}
		}
	}
}

// cosineScale is the score conventions of a request that states none.
var cosineScale = scoreScale{metric: mCosine, levels: true}

// Multi-query merge.
func TestMergeResults(t *testing.T) {
	c := func(id, doc, title string, v float64) Chunk {
		return Chunk{ID: id, DocID: doc, Title: title, Scores: vec(v)}
	}
	lists := [][]Chunk{
		{c("a1", "", "Bell_test", 0.80), c("a2", "", "EPR", 0.81), c("a3", "", "", 0.99)},
		{c("b1", "", "Bell_test", 0.92), c("b2", "", "Aspect", 0.88), c("b3", "", "EPR", 0.81)},
		{c("c1", "d9", "Other", 0.88), c("c2", "", "Bell_test", 0.92)},
	}
	got := mergeResults(lists, 5, &cosineScale)
	want := []string{"b1", "b2", "c1", "a2"} // a3 has no key; ties keep first seen; equal never replaces
	if len(got) != len(want) {
		t.Fatalf("got %d results", len(got))
	}
	for i := range want {
		if got[i].ID != want[i] {
			t.Fatalf("order: got %s at %d, want %s", got[i].ID, i, want[i])
		}
	}
	if n := len(mergeResults(lists, 2, &cosineScale)); n != 2 {
		t.Fatalf("max_results 2: got %d", n)
	}
	if n := len(mergeResults(lists, 0, &cosineScale)); n != 1 {
		t.Fatalf("max_results clamps to >= 1: got %d", n)
	}
	// Through the engine: results_per_query is merged when chunks is empty.
	e := presetEngine(t, "wikigr")
	d := mustDecide(t, e, &Request{Query: "entanglement experiments", ResultsPerQuery: lists})
	if v, _ := sig(d, SigMaxSimilarity); !near(v, 0.92) {
		t.Fatalf("merged max similarity %v", v)
	}
}

// Sufficiency: the formula, its bands and its strings.
func TestSufficiency(t *testing.T) {
	e := presetEngine(t, "sufficient-context")
	long := strings.Repeat("Photosynthesis converts light energy in chloroplasts. ", 25) // > 1000 chars
	// Full coverage, no embeddings: 0.4 + 0.15 + 0.2·(1+0.74)/2 + 0.1 = 0.824.
	d := mustDecide(t, e, &Request{Query: "photosynthesis light energy", Chunks: []Chunk{
		{ID: "a", Text: long}, {ID: "b", Text: long},
	}})
	if v, _ := sig(d, SigSufficiency); !near(v, 0.824) || d.Level != LevelSufficient || d.Action != ActionInject {
		t.Fatalf("sufficient: %v %s %s", v, d.Level, d.Action)
	}
	if len(d.ConfidenceFactors) != 1 || d.ConfidenceFactors[0] != "Good keyword coverage (100%)" {
		t.Fatalf("factors %q", d.ConfidenceFactors)
	}
	// With embeddings (cosine 1): relevance 0.3 instead of 0.15.
	emb := []float64{1, 0, 0}
	d = mustDecide(t, e, &Request{Query: "photosynthesis light energy", QueryEmbedding: emb, Chunks: []Chunk{
		{ID: "a", Text: long, Embedding: []float64{2, 0, 0}}, {ID: "b", Text: long, Embedding: []float64{0, 1, 0}},
	}})
	if v, _ := sig(d, SigSufficiency); !near(v, 0.974) {
		t.Fatalf("with embeddings: %v", v)
	}
	if d.ConfidenceFactors[1] != "High semantic relevance (100%)" {
		t.Fatalf("factors %q", d.ConfidenceFactors)
	}
	// Partial: half coverage, one context of two. 0.2 + 0.15 + 0.2·0.87 + 0.05 = 0.574.
	d = mustDecide(t, e, &Request{Query: "photosynthesis starch", Chunks: []Chunk{{ID: "a", Text: long}}})
	if v, _ := sig(d, SigSufficiency); !near(v, 0.574) || d.Action != ActionCaveat {
		t.Fatalf("partial: %v %s", v, d.Action)
	}
	if d.Caveat != "\n\n*Note: This response is based on limited available information.*" {
		t.Fatalf("caveat %q", d.Caveat)
	}
	want := []string{"Query term 'starch' not found in context", "Only 1 context(s), need 2"}
	if strings.Join(d.MissingAspects, "|") != strings.Join(want, "|") {
		t.Fatalf("missing %q", d.MissingAspects)
	}
	// Insufficient: the decline names the first two aspects, in query order;
	// "art" is a whole term and does not match "start" (accident fixed).
	d = mustDecide(t, e, &Request{Query: "zebra art quagga", Chunks: []Chunk{{ID: "a", Text: "start here"}}})
	if d.Action != ActionRefuse || d.Level != LevelInsufficient {
		t.Fatalf("insufficient: %s", d.Action)
	}
	wantMsg := "I don't have sufficient information to answer this question accurately. Missing: Query term 'zebra' not found in context, Query term 'art' not found in context. Could you provide more context or rephrase?"
	if d.Refusal == nil || d.Refusal.Message != wantMsg {
		t.Fatalf("refusal %+v", d.Refusal)
	}
	if len(d.MissingAspects) != 5 || d.MissingAspects[3] != "Retrieved context lacks detailed information" {
		t.Fatalf("missing order %q", d.MissingAspects)
	}
	// No chunks: the original code's early return.
	d = mustDecide(t, e, &Request{Query: "anything"})
	if d.Action != ActionRefuse || d.Confidence != 0 || d.MissingAspects[0] != "No relevant context found" {
		t.Fatalf("empty: %+v", d)
	}
	// Bands at their edges (>=).
	for _, c := range []struct {
		v    float64
		want Level
	}{{0.8, LevelSufficient}, {0.7999999, LevelPartial}, {0.5, LevelPartial}, {0.4999999, LevelInsufficient}} {
		if got := bandFor(e.policy, c.v).Level; got != c.want {
			t.Errorf("band(%v) = %s want %s", c.v, got, c.want)
		}
	}
}

func bandFor(p *Policy, v float64) Outcome {
	for _, b := range p.Bands {
		if v >= b.Min {
			return b.Outcome
		}
	}
	return p.Bands[len(p.Bands)-1].Outcome
}

// Evidence: RRF formula, 1-based ranks, floors.
func TestRRFAndFloors(t *testing.T) {
	if !near(rrf(1, 60), 1.0/61) || !near(rrf(2, 60), 1.0/62) {
		t.Fatal("rrf(rank, k=60) = 1/(k+rank)")
	}
	e := presetEngine(t, "support-agent")
	d := mustDecide(t, e, &Request{Query: "reset password", Chunks: []Chunk{
		{ID: "a", Text: "reset password", Scores: Scores{Vector: 0.9, HasVector: true, BM25: 3, HasBM25: true}},
		{ID: "b", Text: "password", Scores: Scores{Vector: 0.5, HasVector: true, BM25: 9, HasBM25: true}},
		{ID: "c", Text: "other", Scores: Scores{BM25: 1, HasBM25: true}},
	}})
	fused := map[string]float64{}
	for _, c := range d.Chunks {
		fused[c.ID] = c.Fused
	}
	if !near(fused["a"], 1.0/61+1.0/62) || !near(fused["b"], 1.0/62+1.0/61) || !near(fused["c"], 1.0/63) {
		t.Fatalf("fused %v", fused)
	}
	// Evidence = query-term coverage when a chunk has no scores (the only
	// component present): pin the floors exactly.
	q := "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango"
	terms := strings.Fields(q)
	chunk := func(id string, n int) Chunk { return Chunk{ID: id, Text: strings.Join(terms[:n], " ")} }
	cases := []struct {
		n       int // terms covered of 20
		action  Action
		flagged bool
		kept    bool
	}{
		{10, ActionInject, false, true}, // 0.50: not low confidence (>=)
		{9, ActionInject, true, true},   // 0.45: low confidence
		{7, ActionInject, true, true},   // 0.35: exactly the floor, kept
		{6, ActionRefuse, true, false},  // 0.30: below the floor: hard refusal
	}
	for _, c := range cases {
		d := mustDecide(t, e, &Request{Query: q, Chunks: []Chunk{chunk("x", c.n)}})
		if d.Action != c.action || d.FlagForReview != c.flagged || d.Chunks[0].Kept != c.kept {
			t.Errorf("%d/20: %s flag=%v kept=%v", c.n, d.Action, d.FlagForReview, d.Chunks[0].Kept)
		}
		switch {
		case c.action == ActionRefuse:
			if d.Refusal == nil || d.Refusal.Type != "hard" || d.GapEvent == nil || d.GapEvent.Kind != "refusal_hard" || d.Prompt != nil {
				t.Errorf("%d/20: want hard refusal and gap event: %+v", c.n, d)
			}
		case c.flagged:
			if d.GapEvent == nil || d.GapEvent.Kind != "low_confidence" {
				t.Errorf("%d/20: want low_confidence gap", c.n)
			}
		default:
			if d.GapEvent != nil {
				t.Errorf("%d/20: unexpected gap event", c.n)
			}
		}
	}
}

func TestFreshnessAndTrust(t *testing.T) {
	cfg := defaultEvidence()
	cfg.Decay, cfg.DecayDays = "half_life", 30
	day := int64(86400)
	for _, c := range []struct {
		age  int64
		want float64
	}{{0, 1}, {-5 * day, 1}, {30 * day, 0.5}, {60 * day, 0.25}, {15 * day, 0.7071067811865476}} {
		if got := freshness(&cfg, 1000*day, 1000*day-c.age); !near(got, c.want) {
			t.Errorf("half-life age %d: %v want %v", c.age/day, got, c.want)
		}
	}
	cfg.Decay = "linear"
	if got := freshness(&cfg, 100*day, 85*day); !near(got, 0.5) {
		t.Errorf("linear: %v", got)
	}
	if got := freshness(&cfg, 100*day, 10*day); got != 0 {
		t.Errorf("linear past the end: %v", got)
	}
}

// Retrieval confidence (the confidence-scoring document).
func TestRetrievalScorePriority(t *testing.T) {
	cases := []struct {
		s    Scores
		want float64
	}{
		{Scores{Rerank: 0, HasRerank: true, Boosted: 0.9, HasBoosted: true}, 0}, // present 0.0 wins
		{Scores{Boosted: 0.7, HasBoosted: true, RRF: 0.9, HasRRF: true, Vector: 1, HasVector: true}, 0.7},
		{Scores{RRF: 0, HasRRF: true, Vector: 0.8, HasVector: true}, 0},
		{Scores{Vector: 0.6, HasVector: true}, 0.6},
	}
	for i, c := range cases {
		if got, _ := retrievalScore(&c.s, false, clamp01(c.s.Vector), c.s.HasVector); got != c.want {
			t.Errorf("case %d: %v want %v", i, got, c.want)
		}
	}
	// Logits (some rerank outside [0,1]) go through the logistic function.
	if got, _ := retrievalScore(&Scores{Rerank: 0, HasRerank: true}, true, 0, false); got != 0.5 {
		t.Errorf("logit 0: %v", got)
	}
	if a, _ := retrievalScore(&Scores{Rerank: 3.2, HasRerank: true}, true, 0, false); a <= 0.96 || a >= 0.97 {
		t.Errorf("logit 3.2: %v", a)
	}
}

// The document's two worked examples do not follow from its own formula;
// recomputed from the formula they are about 0.77 and 0.30
// (docs/provenance.md, worked-example-arithmetic).
func TestRetrievalWorkedExamples(t *testing.T) {
	hi := retrievalOverall(0.95, 0.12, 0.08, 5.0/6, 0.87, true, 0.17)
	lo := retrievalOverall(0.62, 0.03, 0.18, 0, 0.32, false, 0.83)
	if !near(hi, 0.285+0.08+0.125+0.1305+0.06+0.05+0.0415) || hi < 0.765 || hi > 0.775 {
		t.Errorf("high example: %v", hi)
	}
	if !near(lo, 0.186+0.02+0+0.048+0.01+0.025+0.0085) || lo < 0.295 || lo > 0.30 {
		t.Errorf("low example: %v", lo)
	}
}

func TestRetrievalMetrics(t *testing.T) {
	e := presetEngine(t, "rag-confidence")
	mk := func(doc string, v, b float64) Chunk {
		return Chunk{ID: doc + "x", DocID: doc, Text: "t", Scores: Scores{Vector: v, HasVector: true, BM25: b, HasBM25: true}}
	}
	// Unsorted input: the gap is taken after sorting (accident fixed).
	d := mustDecide(t, e, &Request{Query: "q", Chunks: []Chunk{mk("d1", 0.7, 1), mk("d1", 0.9, 3), mk("d2", 0.8, 2)}})
	want := map[string]float64{SigTopScore: 0.9, SigScoreGap: 0.1, SigConsensus: 2.0 / 3, SigAgreement: 1, SigDiversity: 2.0 / 3}
	for k, v := range want {
		if got, _ := sig(d, k); !near(got, v) {
			t.Errorf("%s = %v want %v", k, got, v)
		}
	}
	if d.Chunks[0].ID != "d1x" || d.Chunks[0].Score != 0.9 {
		t.Errorf("S1 should be the 0.9 chunk: %+v", d.Chunks[0])
	}
	// Agreement rules: < 2 pairs → 0.5; constant series → 1.0.
	d = mustDecide(t, e, &Request{Query: "q", Chunks: []Chunk{mk("d1", 0.6, 1)}})
	if v, _ := sig(d, SigAgreement); v != 0.5 {
		t.Errorf("one pair: %v", v)
	}
	d = mustDecide(t, e, &Request{Query: "q", Chunks: []Chunk{mk("d1", 0.6, 1), mk("d2", 0.7, 1)}})
	if v, _ := sig(d, SigAgreement); v != 1 {
		t.Errorf("constant series: %v", v)
	}
	d = mustDecide(t, e, &Request{Query: "q", Chunks: []Chunk{mk("d1", 0.6, 3), mk("d2", 0.7, 2), mk("d3", 0.8, 1)}})
	if v, _ := sig(d, SigAgreement); v != 0 {
		t.Errorf("perfectly reversed: %v", v)
	}
	// Reranker impact: 1 - |Spearman| with average ranks.
	rr := func(r, f float64) Chunk {
		return Chunk{ID: "c", DocID: "d", Text: "t", Scores: Scores{Rerank: r, HasRerank: true, RRF: f, HasRRF: true}}
	}
	d = mustDecide(t, e, &Request{Query: "q", Chunks: []Chunk{rr(0.9, 0.03), rr(0.5, 0.02), rr(0.1, 0.01)}})
	if v, _ := sig(d, SigRerankerImpact); v != 0 {
		t.Errorf("same order: %v", v)
	}
	if rho, ok := spearman([]float64{1, 2, 2, 3}, []float64{1, 3, 2, 4}); !ok || !near(rho, 0.9486832980505138) {
		t.Errorf("spearman with ties: %v %v", rho, ok)
	}
	// NO RESULTS.
	d = mustDecide(t, e, &Request{Query: "q"})
	if d.Interpretation != "NO RESULTS - No relevant chunks found" || !d.FlagForReview || d.Confidence != 0 || d.Action != ActionRefuse {
		t.Errorf("no results: %+v", d)
	}
	// Bands with >=, flag unless HIGH.
	for _, c := range []struct {
		v     float64
		label string
		flag  bool
	}{{0.85, "HIGH", false}, {0.8499, "MEDIUM", true}, {0.70, "MEDIUM", true}, {0.50, "LOW", true}, {0.4999, "VERY LOW", true}} {
		if b := bandFor(e.policy, c.v); b.Label != c.label || b.Flag != c.flag {
			t.Errorf("band(%v) = %s/%v", c.v, b.Label, b.Flag)
		}
	}
}

// Raw cross-encoder logits count as the confidence-scoring document's scorer counts them
// (raw_scores): reranks 1.5 and 1.2 from two documents give 0.775, MEDIUM,
// where squashing them first (the default policy's report) gives 0.615.
// The rag_confidence object reports the raw figures, the count and the
// boolean, rounded to 3 decimals as to_dict() does.
func TestRetrievalRawScores(t *testing.T) {
	logits := []Chunk{
		{ID: "c1", DocID: "doc1", Text: "t", Scores: Scores{Rerank: 1.5, HasRerank: true}},
		{ID: "c2", DocID: "doc2", Text: "t", Scores: Scores{Rerank: 1.2, HasRerank: true}},
	}
	e := presetEngine(t, "rag-confidence")
	d := mustDecide(t, e, &Request{Query: "q", Chunks: logits})
	if !near(d.Confidence, 0.775) || d.Band != "MEDIUM" || d.Action != ActionCaveat || !d.FlagForReview {
		t.Errorf("raw logits: %v %s %s", d.Confidence, d.Band, d.Action)
	}
	want := RAGConfidence{OverallConfidence: 0.775, TopScore: 1.5, ScoreGap: 0.3, ScoreSpread: 0.15, ConsensusCount: 2,
		BM25DenseAgreement: 0.5, DocumentDiversity: 1,
		Interpretation: "MEDIUM - Moderate confidence, review recommended", ShouldFlagForReview: true}
	if d.RAGConfidence == nil || *d.RAGConfidence != want {
		t.Errorf("rag_confidence %+v\nwant %+v", d.RAGConfidence, want)
	}
	for name, v := range map[string]float64{SigTopScore: 1, SigScoreGap: 0.3, SigScoreSpread: 0.15, SigConsensus: 1} {
		if got, _ := sig(d, name); !near(got, v) {
			t.Errorf("signal %s = %v, want %v (the raw figure, clamped)", name, got, v)
		}
	}
	if d.Chunks[0].ID != "c1" || !(d.Chunks[0].Score > 0.8 && d.Chunks[0].Score < 0.82) {
		t.Errorf("chunks are ordered by the logistic score: %+v", d.Chunks[0])
	}
	def := presetEngine(t, "default")
	dd := mustDecide(t, def, &Request{Query: "q", Chunks: logits})
	if v, _ := sig(dd, SigRetrievalConf); v < 0.61 || v > 0.62 || dd.RAGConfidence != nil {
		t.Errorf("default policy: retrieval_confidence %v (squashed logits), object %+v", v, dd.RAGConfidence)
	}

	// consensus_count is the count; 7 of 8 at or above 0.75; 3 decimals.
	var many []Chunk
	for i, s := range []float64{0.95, 0.9, 0.88, 0.85, 0.8, 0.78, 0.75, 0.3} {
		many = append(many, Chunk{ID: "m" + string(rune('a'+i)), DocID: "d", Text: "t", Scores: Scores{Rerank: s, HasRerank: true}})
	}
	d = mustDecide(t, e, &Request{Query: "q", Chunks: many})
	r := d.RAGConfidence
	if r == nil || r.ConsensusCount != 7 || r.TopScore != 0.95 || r.ScoreGap != 0.05 || r.DocumentDiversity != 0.125 {
		t.Fatalf("eight chunks: %+v", r)
	}
	for _, x := range []float64{r.OverallConfidence, r.ScoreSpread, r.BM25DenseAgreement} {
		if x != round3(x) {
			t.Errorf("%v is not rounded to 3 decimals", x)
		}
	}
	if c, _ := sig(d, SigConsensus); !near(c, 7.0/8) {
		t.Errorf("consensus share %v", c)
	}

	// Negative logits: the raw top is floored at 0 in the object and
	// clamped in the formula; no chunk at all is the scorer's empty result.
	d = mustDecide(t, e, &Request{Query: "q", Chunks: []Chunk{{ID: "n", DocID: "d", Text: "t", Scores: Scores{Rerank: -2, HasRerank: true}}}})
	if r := d.RAGConfidence; r == nil || r.TopScore != 0 || r.Interpretation != "VERY LOW - Poor retrieval, expert review required" {
		t.Errorf("negative logit: %+v", r)
	}
	d = mustDecide(t, e, &Request{Query: "q"})
	if r := d.RAGConfidence; r == nil || *r != (RAGConfidence{Interpretation: "NO RESULTS - No relevant chunks found", ShouldFlagForReview: true}) {
		t.Errorf("no chunks: %+v", r)
	}
	// Hostile magnitudes stay finite.
	d = mustDecide(t, e, &Request{Query: "q", Chunks: []Chunk{
		{ID: "a", Text: "t", Scores: Scores{Rerank: 1.7e308, HasRerank: true}},
		{ID: "b", Text: "t", Scores: Scores{Rerank: -1.7e308, HasRerank: true}}}})
	if r := d.RAGConfidence; r == nil || r.TopScore != rawScoreLimit || r.ScoreGap != 2*rawScoreLimit || r.ScoreSpread != rawScoreLimit {
		t.Errorf("huge scores: %+v", r)
	}
}
