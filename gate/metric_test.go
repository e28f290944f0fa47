package gate

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/internal/invariance"
	"github.com/ctxgate/ctxgate/internal/testgolden"
	"github.com/ctxgate/ctxgate/policies"
)

// Each metric's conversion to a similarity, exact where the arithmetic is.
func TestSimilarity(t *testing.T) {
	for _, c := range []struct {
		m    VectorMetric
		v    float64
		want float64
	}{
		{MetricCosine, 0.82, 0.82}, {MetricCosine, -0.3, -0.3},
		{MetricCosineDistance, 0.25, 0.75}, {MetricCosineDistance, 2, -1}, {MetricCosineDistance, 1, 0},
		{MetricL2, 0, 1}, {MetricL2, 1, 0.5}, {MetricL2, 2, -1}, {MetricL2, 3, -3.5},
		{MetricL2Squared, 0.5, 0.75}, {MetricL2Squared, 4, -1}, {MetricL2Squared, 2, 0},
		{MetricDot, 101.9, 101.9}, {MetricDot, -3, -3},
		{MetricL2, 1e200, -math.MaxFloat64}, {MetricL2Squared, math.MaxFloat64, 1 - math.MaxFloat64/2},
		{MetricNegativeDot, -95.5, 95.5}, {MetricNegativeDot, 0.25, -0.25},
	} {
		if got := similarity(kindOf(t, c.m), c.v); got != c.want {
			t.Errorf("similarity(%s, %v) = %v, want %v", c.m, c.v, got, c.want)
		}
	}
	// Never -0: a decision would write "-0".
	for _, m := range []VectorMetric{MetricNegativeDot, MetricCosineDistance, MetricL2Squared, MetricCosine} {
		v := 0.0
		switch m {
		case MetricCosineDistance:
			v = 1
		case MetricL2Squared:
			v = 2
		case MetricCosine:
			v = math.Copysign(0, -1)
		}
		if got := similarity(kindOf(t, m), v); got != 0 || math.Signbit(got) {
			t.Errorf("similarity(%s, %v) = %v, want +0", m, v, got)
		}
	}
}

func kindOf(t *testing.T, m VectorMetric) metricKind {
	t.Helper()
	k, err := parseMetric(m, mCosine)
	if err != nil || k.name() != string(m) {
		t.Fatalf("metric %q: kind %d (%s), %v", m, k, k.name(), err)
	}
	return k
}

// The rule that names the metric a value out of range would fit: by the
// value alone, the same in every host.
func TestFittingMetric(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{-95.2, "negative_dot"}, {-1.0001, "negative_dot"}, {-1, "cosine or negative_dot"}, {-0.2, "cosine or negative_dot"},
		{0, "cosine_distance, l2 or l2_squared, as the store measures it"},
		{1.3, "cosine_distance, l2 or l2_squared, as the store measures it"},
		{2, "cosine_distance, l2 or l2_squared, as the store measures it"},
		{2.0001, "l2_squared or dot"}, {4, "l2_squared or dot"}, {4.5, "dot"}, {101.9, "dot"}, {1e300, "dot"},
	} {
		if got := fittingMetric(c.v); got != c.want {
			t.Errorf("fittingMetric(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// checkSameError decides req (JSON) by every path: Evaluate (the direct
// decoder, or the tree decoder for what the direct one gives up on),
// Evaluate of the same request through the tree decoder (an escaped key
// makes the direct one give up), and Decide of the decoded Request (a Go
// caller's); all must give the error JSON want.
func checkSameError(t *testing.T, e *Engine, req, want string) {
	t.Helper()
	tree := strings.Replace(req, `"query"`, `"q\u0075ery"`, 1)
	for _, in := range []string{req, tree} {
		// A decision with messages first: the error owes nothing to the
		// engine's message bytes.
		if _, err := e.Evaluate([]byte(`{"query":"rotate the signing key","chunks":[{"text":"Billing runs monthly.","scores":{"bm25":0.1}}]}`)); err != nil {
			t.Fatal(err)
		}
		_, err := e.Evaluate([]byte(in))
		if got := string(AppendError(nil, err)); err == nil || got != want {
			t.Errorf("Evaluate %s\n got %s\nwant %s", in, got, want)
		}
		r, err := DecodeRequest([]byte(in), nil)
		if err != nil {
			t.Fatalf("decode %s: %v", in, err)
		}
		_, err = e.Decide(r)
		if got := string(AppendError(nil, err)); err == nil || got != want {
			t.Errorf("Decide %s\n got %s\nwant %s", in, got, want)
		}
	}
}

// A test per error message of the score conventions: the field, the value,
// and the metric that would fit.
func TestScoreConventionErrors(t *testing.T) {
	def := presetEngine(t, "default")
	errJSON := func(field, msg string) string {
		return `{"error":{"code":"bad_field","message":"` + msg + `","field":"` + field + `"}}`
	}
	two := func(metric, v string) string {
		m := ""
		if metric != "" {
			m = `"vector_metric":"` + metric + `",`
		}
		return `{` + m + `"query":"q","chunks":[{"text":"a","scores":{"vector":0.5}},{"text":"b","scores":{"vector":` + v + `}}]}`
	}
	for _, c := range []struct {
		name, req, field, msg string
	}{
		{"unknown metric", `{"query":"q","vector_metric":"euclid"}`, "vector_metric",
			`must be one of cosine, dot, l2, l2_squared, cosine_distance, negative_dot; got \"euclid\"`},
		{"metric names are exact", `{"query":"q","vector_metric":"Cosine"}`, "vector_metric",
			`must be one of cosine, dot, l2, l2_squared, cosine_distance, negative_dot; got \"Cosine\"`},
		{"unknown scale", `{"query":"q","rerank_scale":"odds"}`, "rerank_scale",
			`must be one of probability, logit; got \"odds\"`},
		{"dot product as cosine", two("", "101.9"), "chunks[1].scores.vector", "101.9 is not a cosine similarity; set vector_metric to dot"},
		{"distance as cosine", two("cosine", "1.3"), "chunks[1].scores.vector",
			"1.3 is not a cosine similarity; set vector_metric to cosine_distance, l2 or l2_squared, as the store measures it"},
		{"squared distance as cosine", two("", "3.2"), "chunks[1].scores.vector", "3.2 is not a cosine similarity; set vector_metric to l2_squared or dot"},
		{"negated dot product as cosine", two("", "-95.25"), "chunks[1].scores.vector", "-95.25 is not a cosine similarity; set vector_metric to negative_dot"},
		{"cosine past slack", two("", "1.000000002"), "chunks[1].scores.vector",
			"1.000000002 is not a cosine similarity; set vector_metric to cosine_distance, l2 or l2_squared, as the store measures it"},
		{"similarity as cosine distance", two("cosine_distance", "-0.4"), "chunks[1].scores.vector",
			"-0.4 is not a cosine distance; set vector_metric to cosine or negative_dot"},
		{"cosine distance above 2", two("cosine_distance", "2.5"), "chunks[1].scores.vector", "2.5 is not a cosine distance; set vector_metric to l2_squared or dot"},
		{"negative l2", two("l2", "-0.1"), "chunks[1].scores.vector", "-0.1 is not an l2 distance; set vector_metric to cosine or negative_dot"},
		{"negative squared l2", two("l2_squared", "-88"), "chunks[1].scores.vector", "-88 is not a squared l2 distance; set vector_metric to negative_dot"},
		{"in results_per_query", `{"query":"q","results_per_query":[[{"doc_id":"a","scores":{"vector":0.5}}],[{"doc_id":"b","scores":{"vector":7}}]]}`,
			"results_per_query[1][0].scores.vector", "7 is not a cosine similarity; set vector_metric to dot"},
		{"logit as probability", `{"query":"q","rerank_scale":"probability","chunks":[{"text":"a","scores":{"rerank":0.9}},{"text":"b","scores":{"rerank":3.2}}]}`,
			"chunks[1].scores.rerank", "3.2 is not a probability; set rerank_scale to logit"},
	} {
		t.Run(c.name, func(t *testing.T) { checkSameError(t, def, c.req, errJSON(c.field, c.msg)) })
	}

	// A metric without cosine levels, with a policy that decides by them.
	wikigr, rag := presetEngine(t, "wikigr"), presetEngine(t, "rag-confidence")
	for _, c := range []struct {
		name string
		e    *Engine
		req  string
		msg  string
	}{
		{"dot with max_similarity", wikigr, `{"query":"q","vector_metric":"dot","chunks":[{"text":"a","scores":{"vector":95}}]}`,
			`dot scores have no cosine levels, and policy \"wikigr\" decides confidence by max_similarity, which reads them: ` +
				`give cosine similarities or distances of unit-length embeddings, or use a policy that does not decide by cosine levels`},
		{"dot without chunks", wikigr, `{"query":"q","vector_metric":"negative_dot"}`,
			`negative_dot scores have no cosine levels, and policy \"wikigr\" decides confidence by max_similarity, which reads them: ` +
				`give cosine similarities or distances of unit-length embeddings, or use a policy that does not decide by cosine levels`},
		{"l2 past the unit bound", wikigr, `{"query":"q","vector_metric":"l2","chunks":[{"text":"a","scores":{"vector":1.5}},{"text":"b","scores":{"vector":7.25}}]}`,
			`l2 scores above 2 (embeddings not of unit length) have no cosine levels, and policy \"wikigr\" decides confidence by max_similarity, which reads them: ` +
				`give cosine similarities or distances of unit-length embeddings, or use a policy that does not decide by cosine levels`},
		{"dot as the retrieval score", rag, `{"query":"q","vector_metric":"dot","chunks":[{"text":"a","scores":{"rerank":0.5,"vector":95}},{"text":"b","scores":{"vector":90}}]}`,
			`dot scores have no cosine levels, and policy \"rag-confidence\" decides confidence by retrieval_confidence, which reads them where a chunk has no rerank, boosted or rrf score: ` +
				`give cosine similarities or distances of unit-length embeddings, or use a policy that does not decide by cosine levels`},
	} {
		t.Run(c.name, func(t *testing.T) { checkSameError(t, c.e, c.req, errJSON("vector_metric", c.msg)) })
	}
	// The retrieval metrics read a level only through the vector fallback:
	// with a rerank score on every chunk, a dot request decides.
	if _, err := rag.Evaluate([]byte(`{"query":"q","vector_metric":"dot","chunks":[{"text":"a","scores":{"rerank":0.5,"vector":95}},{"text":"b","scores":{"rrf":0.01,"vector":90}}]}`)); err != nil {
		t.Errorf("rag-confidence, dot, every chunk reranked or fused: %v", err)
	}
}

// invariantDecisions decides req in every cosine-family convention with e
// and reports where a decision differs from the cosine one's.
func invariantDecisions(t *testing.T, e *Engine, name string, req []byte) {
	t.Helper()
	base, err := e.Evaluate(req)
	if err != nil {
		base = AppendError(nil, err)
	}
	base = append([]byte(nil), base...)
	for _, m := range invariance.Restated {
		r, rerr := invariance.Restate(req, m)
		if rerr != nil {
			t.Fatalf("%s: restate as %s: %v", name, m, rerr)
		}
		got, err := e.Evaluate(r)
		if err != nil {
			got = AppendError(nil, err)
		}
		if err := invariance.Same(base, got); err != nil {
			t.Errorf("%s as %s: %.300v\ncosine: %.300s\n%s: %.300s", name, m, err, base, m, got)
		}
	}
}

// The invariance of score conventions: for unit-length embeddings, a
// request given as cosine similarities, cosine distances, l2 or squared l2
// distances decides the same (action, and confidence within 1e-5) with
// every preset: requests from seeded unit-length embeddings, and every
// golden request with vector scores restated.
func TestMetricInvariance(t *testing.T) {
	n := 80
	if testing.Short() {
		n = 20
	}
	reqs := invariance.Requests(7, n)
	cases, err := testgolden.Load(goldenRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range policies.Names() {
		e := presetEngine(t, name)
		for i, r := range reqs {
			invariantDecisions(t, e, name+" seeded "+string(rune('a'+i%26))+string(rune('0'+i/26)), r)
		}
		for _, c := range testgolden.Of(cases, name) {
			if invariance.Restatable(c.Request) {
				invariantDecisions(t, e, c.Policy+"/"+c.Name, c.Request)
			}
		}
	}
}

// The requests themselves: cosines of unit-length embeddings, some near
// the query and some far, and restated exactly.
func TestInvarianceRequests(t *testing.T) {
	reqs := invariance.Requests(7, 40)
	if !bytes.Equal(reqs[3], invariance.Requests(7, 4)[3]) {
		t.Fatal("the same seed gave other requests")
	}
	lo, hi := 1.0, -1.0
	for _, r := range reqs {
		req, err := DecodeRequest(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range req.Chunks {
			lo, hi = math.Min(lo, c.Scores.Vector), math.Max(hi, c.Scores.Vector)
		}
		for _, m := range invariance.Restated {
			rr, err := invariance.Restate(r, m)
			if err != nil {
				t.Fatal(err)
			}
			back, err := DecodeRequest(rr, nil)
			if err != nil || string(back.VectorMetric) != m || len(back.Chunks) != len(req.Chunks) {
				t.Fatalf("restated as %s: %v", m, err)
			}
			for i, c := range back.Chunks {
				if d := similarity(kindOf(t, back.VectorMetric), c.Scores.Vector) - req.Chunks[i].Scores.Vector; math.Abs(d) > 1e-12 {
					t.Fatalf("%s: chunk %d converts back %v off", m, i, d)
				}
			}
		}
	}
	if lo > 0.3 || hi < 0.8 {
		t.Errorf("cosines span only [%v, %v]", lo, hi)
	}
}

// decideWarnings decides req with the default policy and returns the
// decision's warning codes.
func decideWarnings(t *testing.T, req *Request) []string {
	t.Helper()
	d := mustDecide(t, presetEngine(t, "support-agent"), req)
	var codes []string
	for _, w := range d.Warnings {
		codes = append(codes, w.Code)
	}
	return codes
}

func vectorChunks(vs ...float64) []Chunk {
	cs := make([]Chunk, len(vs))
	for i, v := range vs {
		cs[i] = Chunk{ID: "c" + string(rune('a'+i)), Text: "water boils at one hundred degrees", Scores: vec(v)}
	}
	return cs
}

// The rule for a list that runs the wrong way for its metric: at least
// three vector scores, at least two rises, rises at least twice the falls,
// the first closer than the last; never for a list in a reranker's or a
// fusion's order.
func TestBackwardsRule(t *testing.T) {
	for _, c := range []struct {
		name   string
		metric VectorMetric
		chunks []Chunk
		want   string
	}{
		{"similarities falling", MetricCosine, vectorChunks(0.9, 0.8, 0.7, 0.6), ""},
		{"cosine rising", MetricCosine, vectorChunks(0.2, 0.3, 0.4), WarnLooksLikeDistances},
		{"two scores", MetricCosine, vectorChunks(0.2, 0.3), ""},
		{"one rise", MetricCosine, vectorChunks(0.2, 0.2, 0.3), ""},
		{"rises and falls even", MetricCosine, vectorChunks(0.2, 0.4, 0.3, 0.5, 0.45), ""},
		{"two to one", MetricCosine, vectorChunks(0.2, 0.4, 0.3, 0.5, 0.6), WarnLooksLikeDistances},
		{"first not below last", MetricCosine, vectorChunks(0.5, 0.1, 0.2, 0.3, 0.4, 0.45), ""},
		{"ties only", MetricCosine, vectorChunks(0.5, 0.5, 0.5, 0.5), ""},
		{"dot rising", MetricDot, vectorChunks(88, 90, 95), WarnLooksLikeDistances},
		{"distances rising", MetricL2Squared, vectorChunks(0.3, 0.5, 0.9), ""},
		{"distances falling", MetricL2Squared, vectorChunks(0.9, 0.5, 0.3), WarnLooksLikeSimilarities},
		{"negated dot products falling", MetricNegativeDot, vectorChunks(95, 90, 88), WarnLooksLikeSimilarities},
		{"negated dot products rising", MetricNegativeDot, vectorChunks(-95, -90, -88), ""},
		{"cosine distances falling", MetricCosineDistance, vectorChunks(0.8, 0.5, 0.2), WarnLooksLikeSimilarities},
	} {
		req := &Request{Query: "water boils", VectorMetric: c.metric, Chunks: c.chunks}
		got := strings.Join(decideWarnings(t, req), " ")
		if got != c.want {
			t.Errorf("%s: warnings %q, want %q", c.name, got, c.want)
		}
	}
	// Chunks without a vector score are passed over; a reranked or fused
	// list is not in the vector retriever's order.
	cs := vectorChunks(0.2, 0.3, 0.4)
	cs = append(cs[:1], append([]Chunk{{ID: "x", Text: "bm25 only", Scores: Scores{BM25: 3, HasBM25: true}}}, cs[1:]...)...)
	if got := decideWarnings(t, &Request{Query: "water", Chunks: cs}); len(got) != 1 {
		t.Errorf("a chunk without a vector score in the list: %v", got)
	}
	for _, s := range []Scores{{Rerank: 0.9, HasRerank: true}, {RRF: 0.01, HasRRF: true}} {
		cs := vectorChunks(0.2, 0.3, 0.4)
		cs[0].Scores.Rerank, cs[0].Scores.HasRerank, cs[0].Scores.RRF, cs[0].Scores.HasRRF = s.Rerank, s.HasRerank, s.RRF, s.HasRRF
		if got := decideWarnings(t, &Request{Query: "water", Chunks: cs}); len(got) != 0 {
			t.Errorf("reranked or fused list %+v: %v", s, got)
		}
	}
	// Each results_per_query list is in its retriever's order.
	d := mustDecide(t, presetEngine(t, "wikigr"), &Request{Query: "water", ResultsPerQuery: [][]Chunk{
		{{DocID: "a", Scores: vec(0.9)}},
		{{DocID: "a", Scores: vec(0.1)}, {DocID: "b", Scores: vec(0.2)}, {DocID: "c", Scores: vec(0.3)}}}})
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0].Message, "down results_per_query[1] (0.1 first, 0.3 last)") {
		t.Errorf("results_per_query: %+v", d.Warnings)
	}
}

// The warnings' messages name the metric to set.
func TestBackwardsMessages(t *testing.T) {
	for _, c := range []struct {
		metric VectorMetric
		vs     []float64
		want   string
	}{
		{MetricCosine, []float64{0.21, 0.3, 0.48}, "vector scores rise down chunks (0.21 first, 0.48 last), as distances do in retriever order, " +
			"but vector_metric is cosine: if they are distances, set vector_metric to cosine_distance, l2 or l2_squared"},
		{MetricDot, []float64{-95, -92, -90.5}, "vector scores rise down chunks (-95 first, -90.5 last), as distances do in retriever order, " +
			"but vector_metric is dot: if they are distances, set vector_metric to negative_dot"},
		{MetricDot, []float64{12, 30, 41}, "vector scores rise down chunks (12 first, 41 last), as distances do in retriever order, " +
			"but vector_metric is dot: if they are distances, set vector_metric to l2_squared or l2"},
		{MetricL2, []float64{0.9, 0.8, 0.7}, "vector scores fall down chunks (0.9 first, 0.7 last), as similarities do in retriever order, " +
			"but vector_metric is l2: if they are similarities, set vector_metric to cosine"},
		{MetricL2Squared, []float64{98, 93, 91}, "vector scores fall down chunks (98 first, 91 last), as similarities do in retriever order, " +
			"but vector_metric is l2_squared: if they are similarities, set vector_metric to dot"},
		{MetricNegativeDot, []float64{0.9, 0.5, 0.4}, "vector scores fall down chunks (0.9 first, 0.4 last), as similarities do in retriever order, " +
			"but vector_metric is negative_dot: if they are similarities, set vector_metric to dot"},
	} {
		d := mustDecide(t, presetEngine(t, "support-agent"), &Request{Query: "water", VectorMetric: c.metric, Chunks: vectorChunks(c.vs...)})
		if n := len(d.Warnings); n == 0 || d.Warnings[n-1].Message != c.want {
			t.Errorf("%s %v: %+v\nwant %q", c.metric, c.vs, d.Warnings, c.want)
		}
	}
}

// l2 above 2 (l2_squared above 4): the embeddings are not unit length, so
// the request has no cosine levels, and the decision says so.
func TestNonUnitL2(t *testing.T) {
	for _, m := range []VectorMetric{MetricL2, MetricL2Squared} {
		over := 7.5
		req := &Request{Query: "water boils", VectorMetric: m, Chunks: vectorChunks(1.25, 1.5, over)}
		d := mustDecide(t, presetEngine(t, "support-agent"), req)
		if len(d.Warnings) != 1 || d.Warnings[0].Code != WarnNotUnitLength ||
			!strings.HasPrefix(d.Warnings[0].Message, string(m)+" score 7.5 at chunks[2] is above ") {
			t.Errorf("%s: warnings %+v", m, d.Warnings)
		}
		// No levels: the outcome's vector is the similarity on its own scale.
		for _, o := range d.Chunks {
			if o.ID == "cc" && (!o.HasVector || o.Vector != similarity(kindOf(t, m), over)) {
				t.Errorf("%s: outcome vector %v, want %v", m, o.Vector, similarity(kindOf(t, m), over))
			}
		}
		// Within the bound, levels.
		req.Chunks = vectorChunks(1.25, 1.5, 1.75)
		d = mustDecide(t, presetEngine(t, "support-agent"), req)
		if len(d.Warnings) != 0 {
			t.Errorf("%s within the bound: %+v", m, d.Warnings)
		}
	}
}

// dot and negative_dot: the scores order chunks and count as the semantic
// ranking, but no signal reads them as a level.
func TestLevelFreeMetrics(t *testing.T) {
	chunks := func(sign float64) []Chunk {
		cs := []Chunk{
			{ID: "a", DocID: "d1", Text: "water boils at one hundred degrees celsius at sea level", Scores: Scores{Vector: sign * 91.5, HasVector: true, BM25: 4, HasBM25: true}},
			{ID: "b", DocID: "d2", Text: "ice melts at zero degrees", Scores: Scores{Vector: sign * 97.25, HasVector: true, BM25: 9, HasBM25: true}},
			{ID: "c", DocID: "d3", Text: "pressure changes the boiling point", Scores: Scores{Vector: sign * 88, HasVector: true}},
		}
		return cs
	}
	for _, m := range []VectorMetric{MetricDot, MetricNegativeDot} {
		sign := 1.0
		if m == MetricNegativeDot {
			sign = -1
		}
		req := &Request{Query: "at what temperature does water boil", VectorMetric: m, Chunks: chunks(sign)}
		d := mustDecide(t, presetEngine(t, "default"), req)
		if _, ok := sig(d, SigMaxSimilarity); ok {
			t.Errorf("%s: max_similarity reported from unbounded scores", m)
		}
		if _, ok := sig(d, SigAgreement); !ok {
			t.Errorf("%s: no bm25_dense_agreement though both retrievers scored", m)
		}
		for _, o := range d.Chunks {
			want := map[string]float64{"a": 91.5, "b": 97.25, "c": 88}[o.ID]
			if !o.HasVector || o.Vector != want {
				t.Errorf("%s: outcome %s vector %v, want the similarity %v", m, o.ID, o.Vector, want)
			}
		}
		// Ordering by vector follows the similarity.
		p := *presetEngine(t, "support-agent").Policy()
		p.OrderBy = []string{OrderVector}
		e, err := NewEngineFromPolicy(&p, PolicyRef{Name: "by-vector", Version: "1"})
		if err != nil {
			t.Fatal(err)
		}
		d = mustDecide(t, e, req)
		var order []string
		for _, o := range d.Chunks {
			if o.Kept {
				order = append(order, o.ID)
			}
		}
		if len(order) < 2 || order[0] != "b" || order[1] != "a" {
			t.Errorf("%s: order by vector %v, want b a first", m, order)
		}
		// Evidence reads no vector level, but the vector ranking counts in
		// the fusion: chunk c, which only the vector retriever found, is
		// fused.
		ev := mustDecide(t, presetEngine(t, "support-agent"), req)
		for _, o := range ev.Chunks {
			if o.ID == "c" && (!o.HasFused || o.Fused <= 0) {
				t.Errorf("%s: chunk c not in the fusion: %+v", m, o)
			}
		}
		// Only the order of unbounded scores counts: scaled, they decide
		// the same with every preset that takes them.
		scaled := chunks(sign * 3)
		for _, name := range []string{"default", "support-agent", "sufficient-context"} {
			a := mustDecide(t, presetEngine(t, name), req)
			b := mustDecide(t, presetEngine(t, name), &Request{Query: req.Query, VectorMetric: m, Chunks: scaled})
			if a.Action != b.Action || a.Confidence != b.Confidence {
				t.Errorf("%s, %s: scaled scores decide %s %v, not %s %v", m, name, b.Action, b.Confidence, a.Action, a.Confidence)
			}
		}
	}
}

// rerank_scale: logit puts every rerank score through the logistic
// function, probability takes them as they are, and without one the rule
// by value holds.
func TestRerankScale(t *testing.T) {
	e := presetEngine(t, "rag-confidence")
	req := func(scale RerankScale) *Request {
		return &Request{Query: "q", RerankScale: scale, Chunks: []Chunk{
			{ID: "a", DocID: "a", Scores: Scores{Rerank: 0.9, HasRerank: true}},
			{ID: "b", DocID: "b", Scores: Scores{Rerank: 0.2, HasRerank: true}}}}
	}
	top := func(d *Decision) float64 { v, _ := sig(d, SigTopScore); return v }
	if got := top(mustDecide(t, e, req(""))); got != 0.9 {
		t.Errorf("no scale, scores in [0,1]: top %v, want 0.9", got)
	}
	if got := top(mustDecide(t, e, req(RerankProbability))); got != 0.9 {
		t.Errorf("probability: top %v, want 0.9", got)
	}
	// rag-confidence keeps raw scores; the ordering's retrieval score shows
	// the logistic function.
	p := *presetEngine(t, "support-agent").Policy()
	p.OrderBy = []string{OrderRetrieval}
	byRetrieval, err := NewEngineFromPolicy(&p, PolicyRef{Name: "by-retrieval", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	score := func(scale RerankScale) float64 {
		d := mustDecide(t, byRetrieval, req(scale))
		for _, o := range d.Chunks {
			if o.ID == "a" {
				return o.Score
			}
		}
		return -1
	}
	if got := score(""); got != 0.9 {
		t.Errorf("no scale: retrieval score %v, want 0.9", got)
	}
	if got, want := score(RerankLogit), sigmoid(0.9); !near(got, want) {
		t.Errorf("logit: retrieval score %v, want sigmoid(0.9) = %v", got, want)
	}
}

// Defaults: the host's conventions apply to a request that states none;
// the request's win; bad names and a metric the policy cannot read are
// errors naming the field.
func TestSetDefaults(t *testing.T) {
	e := presetEngine(t, "support-agent")
	if err := e.SetDefaults(Defaults{VectorMetric: "l2_squared", RerankScale: "logit"}); err != nil {
		t.Fatal(err)
	}
	if d := e.Defaults(); d.VectorMetric != MetricL2Squared || d.RerankScale != RerankLogit {
		t.Errorf("Defaults() = %+v", d)
	}
	plain := presetEngine(t, "support-agent")
	cos := []Chunk{{ID: "a", Text: "water boils", Scores: vec(0.8)}, {ID: "b", Text: "ice", Scores: vec(0.5)}}
	sq := []Chunk{{ID: "a", Text: "water boils", Scores: vec(0.4)}, {ID: "b", Text: "ice", Scores: vec(1)}}
	want := mustDecide(t, plain, &Request{Query: "water", Chunks: cos})
	got := mustDecide(t, e, &Request{Query: "water", Chunks: sq})
	if got.Action != want.Action || math.Abs(got.Confidence-want.Confidence) > 1e-9 {
		t.Errorf("default l2_squared: %s %v, want %s %v", got.Action, got.Confidence, want.Action, want.Confidence)
	}
	got = mustDecide(t, e, &Request{Query: "water", VectorMetric: MetricCosine, Chunks: cos})
	if math.Abs(got.Confidence-want.Confidence) > 1e-9 {
		t.Errorf("the request's metric does not win: %v, want %v", got.Confidence, want.Confidence)
	}
	// The default rerank_scale: logit, so a probability-looking 0.9 is a logit.
	if _, err := e.Evaluate([]byte(`{"query":"q","rerank_scale":"probability","chunks":[{"scores":{"rerank":0.5}}]}`)); err != nil {
		t.Errorf("the request's rerank_scale: %v", err)
	}
	var ge *Error
	for _, c := range []struct {
		d     Defaults
		field string
	}{
		{Defaults{VectorMetric: "ip"}, "vector_metric"},
		{Defaults{RerankScale: "raw"}, "rerank_scale"},
	} {
		if err := plain.SetDefaults(c.d); !errors.As(err, &ge) || ge.Field != c.field || ge.Code != CodeBadField {
			t.Errorf("SetDefaults(%+v) = %v", c.d, err)
		}
	}
	w := presetEngine(t, "wikigr")
	if err := w.SetDefaults(Defaults{VectorMetric: MetricDot}); !errors.As(err, &ge) || ge.Field != "vector_metric" ||
		!strings.Contains(ge.Message, `policy "wikigr" decides confidence by max_similarity`) {
		t.Errorf("wikigr with dot by default: %v", err)
	}
	// rag-confidence reads levels only through the vector fallback: a dot
	// default is a per-request question.
	if err := presetEngine(t, "rag-confidence").SetDefaults(Defaults{VectorMetric: MetricDot}); err != nil {
		t.Errorf("rag-confidence with dot by default: %v", err)
	}
}

// Decide's warnings are the caller's: the next decision leaves them be.
func TestWarningsOwned(t *testing.T) {
	e := presetEngine(t, "support-agent")
	d := mustDecide(t, e, &Request{Query: "water", Chunks: vectorChunks(0.2, 0.3, 0.4)})
	if len(d.Warnings) != 1 {
		t.Fatalf("warnings %+v", d.Warnings)
	}
	msg := strings.Clone(d.Warnings[0].Message)
	mustDecide(t, e, &Request{Query: "other", Chunks: vectorChunks(0.4, 0.5, 0.6, 0.7)})
	if d.Warnings[0].Message != msg {
		t.Errorf("a later decision changed an owned warning: %q", d.Warnings[0].Message)
	}
	// No warnings: none in the JSON either, byte for byte as before.
	out, err := e.Evaluate([]byte(`{"query":"water","chunks":[{"text":"a","scores":{"vector":0.9}}]}`))
	if err != nil || bytes.Contains(out, []byte(`"warnings"`)) {
		t.Errorf("a decision without warnings writes the key: %s %v", out, err)
	}
}

// The golden requests restated in every cosine-family convention
// (testdata/requests/<policy>/<base>.<metric>.json) decide as their base:
// every host's golden check holds each to these bytes, so the invariance
// holds in every host that passes it.
func TestGoldenInvariance(t *testing.T) {
	cases, err := testgolden.Load(goldenRoot)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := invariance.Groups(cases)
	if err != nil {
		t.Fatal(err)
	}
	policiesSeen := map[string]bool{}
	for _, g := range groups {
		for _, r := range g.Restated {
			if err := invariance.Same(g.Base.Decision, r.Decision); err != nil {
				t.Errorf("%s/%s: %v", r.Policy, r.Name, err)
			}
		}
		policiesSeen[g.Base.Policy] = true
	}
	if len(groups) < 8 || len(policiesSeen) < 4 {
		t.Errorf("%d restated groups over %d policies, want at least 8 over 4", len(groups), len(policiesSeen))
	}
}
