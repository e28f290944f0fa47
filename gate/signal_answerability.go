package gate

import (
	"math"
	"strings"

	"github.com/ctxgate/ctxgate/gate/internal/decode"
)

// signals.answerability: the default policy's query-level signal, the chance that
// the evidence, taken as a whole, holds the answer. It is a logistic model
// over a few request-level features, each in [0,1] and scale-free, with two
// sets of weights: one for requests whose chunks carry both a lexical
// (bm25) and a semantic (vector or sparse) retriever score, and one for the
// rest, decided from the text alone. Two models rather than one because the
// text says different things in the two cases: with both retrievers'
// scores, the retrievers have already read the words, and what they agree
// on matters more than what the best passage repeats of the question.
//
// Every feature is computed for every request (Engine.Features gives them
// all, for calibration), and a decision reports the features its model
// weights, then answerability itself.

// SigAnswerability is the active model's probability.
const SigAnswerability = "answerability"

var answerabilityGroup = signalGroup{
	key:     "answerability",
	reports: append([]string{SigAnswerability}, FeatureNames[featTermCoverageBest:]...),
	on:      func(p *Policy) bool { return p.Answerability != nil },
	read: func(p *Policy, o obj) *Error {
		c, err := readAnswerability(o)
		if err != nil {
			return err
		}
		p.Answerability = c
		return nil
	},
	check: checkAnswerability,
	state: func() groupState { return &answerabilityState{} },
}

// Answerability features, in the order they are reported.
const (
	featAnswerCoverage = iota
	featTermCoverageBest
	featTermCoverageMean
	featDocConcentration
	featRetrieverAgreement
	featLexicalSpread
	featSemanticSpread
	featTopVector
	featTopBM25
	featTopSparse
	featChunkCount
	featNoTermMatch
	nFeatures
)

// FeatureNames are the answerability features by index, as a policy's
// weights and a decision's signals name them:
//   - answer_coverage: the best chunk's answer_coverage (signals.answer_coverage);
//   - term_coverage_best, term_coverage_mean: the share of the query's terms
//     (answer_coverage's terms) in the best chunk's text, and on average
//     over the chunks;
//   - doc_concentration: how many chunks come from a document another chunk
//     also comes from, (n − distinct documents)/(n − 1), 0 for one chunk; a
//     chunk without doc_id is a document of its own;
//   - retriever_agreement: the share of chunks carrying both a lexical and a
//     semantic score, 0 unless the request has both kinds;
//   - lexical_spread, semantic_spread: the coefficient of variation c of the
//     bm25 scores, and of the sparse scores (else the vector scores), as
//     c/(1+c); 0 with fewer than two scores;
//   - top_vector, top_bm25, top_sparse: the raw best score of each kind,
//     bm25 and sparse saturated as s/(s+saturation); 0 when absent. Raw
//     levels mean something only for one retriever on one corpus: the
//     default gives them no weight, and calibration fits them to a
//     deployment's own retriever;
//   - chunk_count: (n−1)/(n+9) for n chunks, in [0,1) (0 for one chunk,
//     0.47 for ten, 0.66 for twenty; + − / only, as every number here, so
//     every build gives the same bits). What the other features mean
//     moves with how many chunks a request carries (deeper lists hold more
//     passages one retriever alone returned, and lower the mean coverage),
//     so a model whose probabilities are to mean the same at 5 and at 20
//     chunks needs to know n. It says nothing about the answer by itself;
//   - no_term_match: 1 when the query has terms and no chunk holds any of
//     them (term_coverage_best is 0), else 0. answer_coverage reads a
//     short chunk that shares no word with the question near a long one
//     that shares a few (its length term is small), so a retrieval that
//     missed the topic needs saying outright.
var FeatureNames = [nFeatures]string{
	"answer_coverage", "term_coverage_best", "term_coverage_mean", "doc_concentration",
	"retriever_agreement", "lexical_spread", "semantic_spread",
	"top_vector", "top_bm25", "top_sparse", "chunk_count", "no_term_match",
}

// featureIndex returns the index of a feature name, or -1.
func featureIndex(name string) int {
	for i, n := range FeatureNames {
		if n == name {
			return i
		}
	}
	return -1
}

// AnswerabilityModel is one logistic model: sigmoid(Bias + sum of
// Weights[i]·feature[i]). Used marks the features the policy names (a
// named weight of 0 is still reported).
type AnswerabilityModel struct {
	Bias    float64
	Weights [nFeatures]float64
	Used    [nFeatures]bool
}

// AnswerabilityConfig is signals.answerability.
type AnswerabilityConfig struct {
	Text   AnswerabilityModel // text: requests without both kinds of retriever score
	Scored AnswerabilityModel // scored: requests with a lexical and a semantic score
	// HasScored is false when the policy gives no scored model: then the
	// text model decides every request.
	HasScored bool
	// ScoredMinCoverage (scored_min_term_coverage) is the least
	// term_coverage_best for which the scored model decides: it was fitted
	// on retrievals that are on topic, and what two retrievers agree on
	// says nothing about whether chunks that do not mention the question
	// answer it. Below it, the text model decides.
	ScoredMinCoverage float64
	BM25Saturation    float64 // bm25_saturation: top_bm25 = s/(s+this) (10)
	SparseSaturation  float64 // sparse_saturation: top_sparse = s/(s+this) (1)
	// VectorCenter and VectorScale (vector_center, vector_scale) place
	// the best vector similarity on a deployment's own scale:
	// top_vector = sigmoid((s − center)/scale), whatever the metric (a
	// dot product, a cosine). Calibration sets them from the deployment's
	// examples; with no scale (0), top_vector is the best cosine level,
	// and 0 for a metric without levels.
	VectorCenter, VectorScale float64
}

func checkAnswerability(p *Policy) *Error {
	a := p.Answerability
	const at = "signals.answerability"
	if p.AnswerCoverage == nil {
		return policyErr(at, "needs signals.answer_coverage (its answer_coverage is a feature)")
	}
	for _, m := range [...]struct {
		name string
		m    *AnswerabilityModel
		on   bool
	}{{"text", &a.Text, true}, {"scored", &a.Scored, a.HasScored}} {
		if !m.on {
			continue
		}
		if !logitWeight(m.m.Bias) {
			return policyErr(at+"."+m.name+".bias", "must be a finite number in [-100,100]")
		}
		for i, w := range m.m.Weights {
			if m.m.Used[i] && !logitWeight(w) {
				return policyErr(at+"."+m.name+".weights."+FeatureNames[i], "must be a finite number in [-100,100]")
			}
		}
	}
	if !unit(a.ScoredMinCoverage) {
		return policyErr(at+".scored_min_term_coverage", "must be in [0,1]")
	}
	if !finite(a.BM25Saturation) || a.BM25Saturation <= 0 {
		return policyErr(at+".bm25_saturation", "must be a finite number > 0")
	}
	if !finite(a.SparseSaturation) || a.SparseSaturation <= 0 {
		return policyErr(at+".sparse_saturation", "must be a finite number > 0")
	}
	if !finite(a.VectorCenter) || math.Abs(a.VectorCenter) > rawScoreLimit {
		return policyErr(at+".vector_center", "must be a finite number within ±1e9")
	}
	if !finite(a.VectorScale) || a.VectorScale < 0 || a.VectorScale > rawScoreLimit || (a.VectorScale > 0 && a.VectorScale < 1e-9) {
		return policyErr(at+".vector_scale", "must be 0 (no calibrated level) or a finite number in [1e-9, 1e9]")
	}
	return nil
}

func defaultAnswerability() AnswerabilityConfig {
	return AnswerabilityConfig{BM25Saturation: 10, SparseSaturation: 1}
}

// readAnswerability reads signals.answerability: the text model (required),
// the scored model, and the two saturations.
func readAnswerability(o obj) (*AnswerabilityConfig, *Error) {
	if err := o.Strict("text scored scored_min_term_coverage bm25_saturation sparse_saturation vector_center vector_scale"); err != nil {
		return nil, err
	}
	c := defaultAnswerability()
	t, _, err := o.Object("text", true)
	if err != nil {
		return nil, err
	}
	if err := readAnswerabilityModel(t, &c.Text); err != nil {
		return nil, err
	}
	if m, ok, err := o.Object("scored", false); err != nil {
		return nil, err
	} else if ok {
		if err := readAnswerabilityModel(m, &c.Scored); err != nil {
			return nil, err
		}
		c.HasScored = true
	}
	if err := readNum(o, "scored_min_term_coverage", &c.ScoredMinCoverage); err != nil {
		return nil, err
	}
	if err := readNum(o, "bm25_saturation", &c.BM25Saturation); err != nil {
		return nil, err
	}
	if err := readNum(o, "sparse_saturation", &c.SparseSaturation); err != nil {
		return nil, err
	}
	if err := readNum(o, "vector_center", &c.VectorCenter); err != nil {
		return nil, err
	}
	if err := readNum(o, "vector_scale", &c.VectorScale); err != nil {
		return nil, err
	}
	return &c, nil
}

// readAnswerabilityModel reads {"bias": b, "weights": {"feature": w, ...}};
// a weight names one of FeatureNames.
func readAnswerabilityModel(o obj, m *AnswerabilityModel) *Error {
	if err := o.Strict("bias weights"); err != nil {
		return err
	}
	if err := readNum(o, "bias", &m.Bias); err != nil {
		return err
	}
	ws, ok, err := o.Object("weights", true)
	if err != nil || !ok {
		return err
	}
	for i, n := 0, ws.Value().Len(); i < n; i++ {
		k := ws.Value().Key(i)
		f := featureIndex(k)
		if f < 0 {
			return ws.Fail(k, "unknown feature (want one of "+featureList()+")")
		}
		if err := readNum(ws, k, &m.Weights[f]); err != nil {
			return err
		}
		m.Used[f] = true
	}
	return nil
}

func featureList() string { return strings.Join(FeatureNames[:], ", ") }

// features computes every answerability feature of the current request into
// s.feat and tells whether it has both kinds of retriever score. answer is
// the chunks' answer_coverage (answerCoverageState.score).
func (s *answerabilityState) features(e *Engine, cfg *AnswerabilityConfig, answer []float64) (paired bool) {
	f := &s.feat
	*f = [nFeatures]float64{}
	w := e.work
	n := len(w)
	if n == 0 {
		return false
	}
	var covSum float64
	var bm, sem, sp, sim moments
	for i := range w {
		c := &w[i]
		f[featAnswerCoverage] = maxf(f[featAnswerCoverage], answer[i])
		cov := 1.0 // no term: nothing is missing (as in sufficiency coverage)
		if e.q.nAnswer > 0 {
			cov = float64(c.answerHits) / float64(e.q.nAnswer)
		}
		covSum += cov
		f[featTermCoverageBest] = maxf(f[featTermCoverageBest], cov)
		sc := &c.c.Scores
		if sc.HasBM25 {
			bm.add(sc.BM25)
		}
		if sc.HasSparse {
			sp.add(sc.Sparse)
		}
		if c.hasVector {
			sem.add(c.vector) // the cosine level: only with a metric that has one
		}
		if c.hasSim {
			sim.add(c.sim)
		}
	}
	f[featTermCoverageMean] = covSum / float64(n)
	if n > 1 {
		f[featDocConcentration] = float64(n-s.docs.distinctDocs(w)) / float64(n-1)
	}
	paired = bm.n > 0 && (sim.n > 0 || sp.n > 0)
	if paired {
		both := 0
		for i := range w {
			sc := &w[i].c.Scores
			if sc.HasBM25 && (sc.HasVector || sc.HasSparse) {
				both++
			}
		}
		f[featRetrieverAgreement] = float64(both) / float64(n)
	}
	f[featLexicalSpread] = bm.spread()
	if sp.n > 0 {
		f[featSemanticSpread] = sp.spread()
	} else {
		f[featSemanticSpread] = sem.spread()
	}
	switch {
	case cfg.VectorScale > 0 && sim.n > 0:
		f[featTopVector] = sigmoid((sim.max - cfg.VectorCenter) / cfg.VectorScale)
	case sem.n > 0:
		f[featTopVector] = sem.max
	}
	if bm.n > 0 {
		f[featTopBM25] = bm.max / (bm.max + cfg.BM25Saturation)
	}
	if sp.n > 0 {
		f[featTopSparse] = sp.max / (sp.max + cfg.SparseSaturation)
	}
	f[featChunkCount] = float64(n-1) / float64(n+9)
	if e.q.nAnswer > 0 && f[featTermCoverageBest] == 0 {
		f[featNoTermMatch] = 1
	}
	for i := range f {
		f[i] = clamp01(snap(f[i]))
	}
	return paired
}

// answerabilityState holds the features and the document set.
type answerabilityState struct {
	feat [nFeatures]float64
	docs docSet
}

// run reports the active model's features and its probability.
func (s *answerabilityState) run(e *Engine, _ *Request) {
	cfg := e.policy.Answerability
	if len(e.work) == 0 {
		return
	}
	answer := e.state(&answerCoverageGroup).(*answerCoverageState).answer
	m := &cfg.Text
	if s.features(e, cfg, answer) && cfg.HasScored && s.feat[featTermCoverageBest] >= cfg.ScoredMinCoverage {
		m = &cfg.Scored
	}
	x := m.Bias
	for i := range s.feat {
		if m.Used[i] {
			x += float64(m.Weights[i] * s.feat[i])
			// answer_coverage is reported by its own group already,
			// with the same value.
			if i != featAnswerCoverage {
				e.addSignal(FeatureNames[i], s.feat[i])
			}
		}
	}
	e.addSignal(SigAnswerability, sigmoid(x))
}

// moments accumulates what a spread needs: count, sum, sum of squares, max.
type moments struct {
	n            int
	sum, sq, max float64
}

func (m *moments) add(x float64) {
	if m.n == 0 || x > m.max {
		m.max = x
	}
	m.n++
	m.sum += x
	m.sq += float64(x * x)
}

// spread is the coefficient of variation c = sd/mean as c/(1+c), in [0,1).
// Multiplying every score by one constant leaves it unchanged, so BM25's
// and a sparse model's unbounded scores, whose scale differs per corpus and
// model, give comparable values. Cosines differ between embedding models by
// an offset as well, which it does not remove. 0 with fewer than two scores
// or a zero mean.
func (m *moments) spread() float64 {
	if m.n < 2 || m.sum <= 0 {
		return 0
	}
	mean := m.sum / float64(m.n)
	v := m.sq/float64(m.n) - float64(mean*mean)
	if v <= 0 {
		return 0
	}
	c := math.Sqrt(v) / mean
	return c / (1 + c)
}

// Features returns every answerability feature of a request, named as
// FeatureNames, whatever the policy weights: calibration fits its own
// weights over them (host side; ctxgate calibrate). answer_coverage uses the
// policy's weights for it, or their defaults when the policy has none. The
// request is checked as Decide checks it.
func (e *Engine) Features(req *Request) ([]Signal, error) {
	f, _, err := e.AnswerabilityFeatures(req)
	return f, err
}

// AnswerabilityFeatures is Features, and tells which of the policy's models
// decides the request: scored is true when the policy has a scored model,
// the request carries both kinds of retriever score and its
// term_coverage_best reaches scored_min_term_coverage; else the text model
// decides. Calibration fits each model on the requests it decides.
func (e *Engine) AnswerabilityFeatures(req *Request) (features []Signal, scored bool, err error) {
	if req == nil {
		return nil, false, errorf(CodeBadField, "", "request is nil")
	}
	if err := decode.CheckLimits(req, &e.policy.Limits); err != nil {
		return nil, false, err
	}
	if err := e.checkInput(req); err != nil {
		return nil, false, err
	}
	chunks := req.Chunks
	if len(chunks) == 0 && len(req.ResultsPerQuery) > 0 {
		chunks = mergeResults(req.ResultsPerQuery, e.policy.Merge.MaxResults, &e.scale)
	}
	p := e.policy
	ac := p.AnswerCoverage
	if ac == nil {
		d := defaultAnswerCoverage()
		ac = &d
	}
	cfg := p.Answerability
	if cfg == nil {
		d := defaultAnswerability()
		cfg = &d
	}
	e.a.reset(e.ref)
	e.analyseQuery(req.Query)
	e.prepare(chunks)
	acs := e.state(&answerCoverageGroup).(*answerCoverageState)
	acs.score(e, ac)
	s := e.state(&answerabilityGroup).(*answerabilityState)
	paired := s.features(e, cfg, acs.answer)
	out := make([]Signal, nFeatures)
	for i := range out {
		out[i] = Signal{Name: FeatureNames[i], Value: s.feat[i]}
	}
	scored = paired && cfg.HasScored && s.feat[featTermCoverageBest] >= cfg.ScoredMinCoverage
	return out, scored, nil
}

// TopScores are a request's best raw retriever scores, each as the gate
// reads it: Vector the best vector similarity under the request's score
// conventions (the engine's defaults where it states none), BM25 and Sparse
// the best raw scores. A Has flag is false when no chunk carries the score.
type TopScores struct {
	Vector, BM25, Sparse          float64
	HasVector, HasBM25, HasSparse bool
}

// TopScores checks req as Decide does and returns its best raw scores:
// what calibration places a deployment's own score levels by
// (vector_center, vector_scale, the saturations).
func (e *Engine) TopScores(req *Request) (TopScores, error) {
	var t TopScores
	if req == nil {
		return t, errorf(CodeBadField, "", "request is nil")
	}
	if err := decode.CheckLimits(req, &e.policy.Limits); err != nil {
		return t, err
	}
	if err := e.checkInput(req); err != nil {
		return t, err
	}
	chunks := req.Chunks
	if len(chunks) == 0 && len(req.ResultsPerQuery) > 0 {
		chunks = mergeResults(req.ResultsPerQuery, e.policy.Merge.MaxResults, &e.scale)
	}
	for i := range chunks {
		s := &chunks[i].Scores
		if s.HasVector {
			if v := similarity(e.scale.metric, s.Vector); !t.HasVector || v > t.Vector {
				t.Vector, t.HasVector = v, true
			}
		}
		if s.HasBM25 && (!t.HasBM25 || s.BM25 > t.BM25) {
			t.BM25, t.HasBM25 = s.BM25, true
		}
		if s.HasSparse && (!t.HasSparse || s.Sparse > t.Sparse) {
			t.Sparse, t.HasSparse = s.Sparse, true
		}
	}
	return t, nil
}
