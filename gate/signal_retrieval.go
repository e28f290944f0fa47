package gate

import (
	"strconv"
)

// signals.retrieval: the seven retrieval metrics of the confidence-scoring
// document over the chunks' scores, and its weighted overall confidence
// (retrieval_confidence); with rag_confidence on, the decision also carries
// the metrics as that document's scorer reports them.

// The signals of the retrieval metrics.
const (
	SigTopScore       = "top_score"
	SigScoreGap       = "score_gap"
	SigScoreSpread    = "score_spread"
	SigConsensus      = "consensus"
	SigAgreement      = "bm25_dense_agreement"
	SigRerankerImpact = "reranker_impact"
	SigDiversity      = "document_diversity"
	SigGraphSupport   = "graph_support"
	SigRetrievalConf  = "retrieval_confidence"
)

var retrievalGroup = signalGroup{
	key: "retrieval",
	reports: []string{SigTopScore, SigScoreGap, SigScoreSpread, SigConsensus, SigAgreement,
		SigRerankerImpact, SigDiversity, SigGraphSupport, SigRetrievalConf},
	on:   func(p *Policy) bool { return p.Retrieval != nil },
	read: readRetrieval,
	check: func(p *Policy) *Error {
		if !unit(p.Retrieval.ConsensusThreshold) {
			return policyErr("signals.retrieval.consensus_threshold", "must be in [0,1]")
		}
		return nil
	},
	state: func() groupState { return &retrievalState{} },
}

// RetrievalConfig is the seven-metric retrieval confidence.
type RetrievalConfig struct {
	ConsensusThreshold float64 // consensus_threshold (0.75, compared with >=)
	// RawScores (raw_scores) takes each chunk's score as the request gives
	// it, a cross-encoder logit staying a logit, and clamps only inside the
	// overall formula, as the confidence-scoring document's scorer does.
	// Off, every score is clamped to [0,1] first and rerank logits go
	// through the logistic function.
	RawScores bool
	// Report (rag_confidence) adds the decision's rag_confidence object:
	// the metrics as that scorer's to_dict() reports them.
	Report bool
}

func defaultRetrieval() RetrievalConfig { return RetrievalConfig{ConsensusThreshold: 0.75} }

func readRetrieval(p *Policy, o obj) *Error {
	if err := o.Strict("consensus_threshold raw_scores rag_confidence"); err != nil {
		return err
	}
	c := defaultRetrieval()
	if err := readNum(o, "consensus_threshold", &c.ConsensusThreshold); err != nil {
		return err
	}
	if err := readBool(o, "raw_scores", &c.RawScores); err != nil {
		return err
	}
	if err := readBool(o, "rag_confidence", &c.Report); err != nil {
		return err
	}
	p.Retrieval = &c
	return nil
}

// retrievalState is the metrics' scratch: the scores in rank order, the
// series correlated, their ranks, and the document set.
type retrievalState struct {
	order, tmp   []int
	keys, xs, ys []float64
	rx, ry       []float64
	docs         docSet
}

// retrievalScore is the confidence-scoring document's per-chunk score:
// rerank, then boosted, then rrf, then the vector score's cosine level
// (hasLevel: the chunk has one, metric.go), by presence. A present 0.0 is
// a real score; the original's truthiness chain let it fall through (an
// accident fixed). With logits set (rerank_scale logit, or no rerank_scale
// and some rerank score in the request outside [0,1], as cross-encoder
// logits are), rerank scores go through the logistic function instead of
// being clamped, so they keep their order.
func retrievalScore(s *Scores, logits bool, level float64, hasLevel bool) (float64, bool) {
	switch {
	case s.HasRerank && logits:
		return clamp01(sigmoid(s.Rerank)), true
	case s.HasRerank:
		return clamp01(s.Rerank), true
	case s.HasBoosted:
		return clamp01(s.Boosted), true
	case s.HasRRF:
		return clamp01(s.RRF), true
	case hasLevel:
		return level, true
	}
	return 0, false
}

// rawScoreLimit bounds a raw score in the retrieval metrics (raw_scores): no
// retriever scores beyond it, and within it every gap, spread and sum stays
// finite.
const rawScoreLimit = 1e9

func limitRaw(x float64) float64 {
	if x > rawScoreLimit {
		return rawScoreLimit
	}
	if x < -rawScoreLimit {
		return -rawScoreLimit
	}
	return x
}

// rawRetrievalScore is retrievalScore as the document's scorer takes it: the
// first present field of rerank, boosted, rrf (as the request gives them,
// within ±rawScoreLimit) and the vector score's cosine level, 0 when none
// is.
func rawRetrievalScore(s *Scores, level float64, hasLevel bool) float64 {
	switch {
	case s.HasRerank:
		return limitRaw(s.Rerank)
	case s.HasBoosted:
		return limitRaw(s.Boosted)
	case s.HasRRF:
		return limitRaw(s.RRF)
	case hasLevel:
		return level
	}
	return 0
}

// retrievalMetrics are the confidence-scoring document's seven metrics (plus reranker impact,
// reported but not weighted).
type retrievalMetrics struct {
	top, gap, spread float64
	consensus        int
	n                int
	agreement        float64
	agreementPairs   int
	rerankerImpact   float64
	diversity        float64
	graphSupport     bool
	graphGiven       bool
	overall          float64
}

// retrievalOverall is the document's weighted formula with every term clamped to
// [0,1], as the later version of the original does: the normalization lives
// here only, so raw scores (a logit's top of 1.5, a gap of 0.6) count as 1.
func retrievalOverall(top, gap, spread, consensusFrac, agreement float64, graph bool, diversity float64) float64 {
	g := 0.5
	if graph {
		g = 1
	}
	s := float64(0.30*clamp01(top)) +
		float64(0.20*clamp01(gap/0.3)) +
		float64(0.15*clamp01(consensusFrac)) +
		float64(0.15*clamp01(agreement)) +
		float64(0.10*clamp01(1-spread/0.2)) +
		float64(0.05*g) +
		float64(0.05*clamp01(1-diversity))
	return clamp01(snap(s))
}

// The interpretations of the document's scorer: its bands by its default
// thresholds (>=), flagged for review unless HIGH, and its empty result.
var scorerBands = [...]struct {
	min            float64
	interpretation string
	flag           bool
}{
	{0.85, "HIGH - Strong retrieval confidence", false},
	{0.70, "MEDIUM - Moderate confidence, review recommended", true},
	{0.50, "LOW - Weak retrieval, mandatory review", true},
	{0, "VERY LOW - Poor retrieval, expert review required", true},
}

const scorerNoResults = "NO RESULTS - No relevant chunks found"

// The retrieval metrics over all chunks. Scores are sorted descending before top and gap
// are taken; the original took them in input order, so its gap could be
// negative (an accident fixed). With raw_scores the metrics take each
// chunk's score as given (a cross-encoder logit stays a logit) and only the
// overall formula clamps; without, they take the clamped retrieval score
// (logits through the logistic function), as the chunks are ordered.
func (s *retrievalState) run(e *Engine, _ *Request) {
	w := e.work
	n := len(w)
	cfg := e.policy.Retrieval
	if n == 0 {
		if cfg.Report {
			r := e.a.ragObject()
			*r = RAGConfidence{Interpretation: scorerNoResults, ShouldFlagForReview: true}
		}
		return
	}
	raw := cfg.RawScores
	m := retrievalMetrics{n: n}
	s.order, s.tmp, s.keys = zeroed(s.order, n), zeroed(s.tmp, n), resizeFloat(s.keys, n)
	keys := s.keys[:n]
	order := s.order[:n]
	for i := range w {
		if raw {
			keys[i] = rawRetrievalScore(&w[i].c.Scores, w[i].vector, w[i].hasVector)
		} else {
			keys[i] = w[i].retrieval
		}
		order[i] = i
	}
	sortDesc(order, keys, s.tmp[:n])
	m.top = keys[order[0]]
	if n > 1 {
		m.gap = keys[order[0]] - keys[order[1]]
	}
	m.spread = popStd(keys)
	for i := range w {
		if keys[i] >= cfg.ConsensusThreshold {
			m.consensus++
		}
	}
	// BM25–dense agreement over chunks with both scores (the dense score is
	// the vector score, or the learned-sparse one in a request without
	// vector scores: a correlation does not care about its scale): (r+1)/2; 0.5 with
	// fewer than 2 pairs, 1.0 when a series is constant (the original's rules).
	// The pairs are written by index, not appended: under TinyGo an
	// append is a runtime call, and these loops run per chunk.
	s.xs, s.ys = resizeFloat(s.xs, n), resizeFloat(s.ys, n)
	xs, ys := s.xs, s.ys
	pairs := 0
	for i := range w {
		if w[i].hasSem && w[i].hasBM25 {
			if raw {
				xs[pairs], ys[pairs] = limitRaw(w[i].c.Scores.BM25), limitRaw(w[i].sem)
			} else {
				xs[pairs], ys[pairs] = w[i].bm25, w[i].sem
			}
			pairs++
		}
	}
	xs, ys = xs[:pairs], ys[:pairs]
	m.agreementPairs = len(xs)
	switch {
	case len(xs) < 2:
		m.agreement = 0.5
	default:
		if r, ok := pearson(xs, ys); ok {
			m.agreement = clamp01((r + 1) / 2)
		} else {
			m.agreement = 1
		}
	}
	// Reranker impact: 1 - |Spearman rho| between rerank and rrf scores,
	// ranked in the engine's scratch (order is free again).
	xs, ys, pairs = s.xs, s.ys, 0
	for i := range w {
		s := &w[i].c.Scores
		if s.HasRerank && s.HasRRF {
			xs[pairs], ys[pairs] = s.Rerank, clamp01(s.RRF) // ranks only: no normalisation needed
			if raw {
				ys[pairs] = limitRaw(s.RRF)
			}
			pairs++
		}
	}
	xs, ys = xs[:pairs], ys[:pairs]
	s.rx, s.ry = resizeFloat(s.rx, n), resizeFloat(s.ry, n)
	if rho, ok := spearmanInto(xs, ys, order, s.rx, s.ry); ok {
		if rho < 0 {
			rho = -rho
		}
		m.rerankerImpact = clamp01(1 - rho)
	}
	// Document diversity and graph support.
	docs := s.docs.distinct(w)
	for i := range w {
		if w[i].c.Scores.HasGraph {
			m.graphGiven = true
			if w[i].c.Scores.Graph > 0 {
				m.graphSupport = true
			}
		}
	}
	m.diversity = float64(docs) / float64(n)
	consensusFrac := float64(m.consensus) / float64(n)
	m.overall = retrievalOverall(m.top, m.gap, m.spread, consensusFrac, m.agreement, m.graphSupport, m.diversity)

	e.addSignal(SigTopScore, m.top)
	e.addSignal(SigScoreGap, clamp01(m.gap))
	e.addSignal(SigScoreSpread, clamp01(m.spread))
	e.addSignal(SigConsensus, consensusFrac)
	e.addSignal(SigAgreement, m.agreement)
	e.addSignal(SigRerankerImpact, m.rerankerImpact)
	e.addSignal(SigDiversity, m.diversity)
	g := 0.0
	if m.graphSupport {
		g = 1
	}
	e.addSignal(SigGraphSupport, g)
	e.addSignal(SigRetrievalConf, m.overall)
	if cfg.Report {
		e.reportRetrieval(&m)
	}
	e.retrievalRecs(&m, docs)
}

// reportRetrieval fills the decision's rag_confidence object as the scorer's
// to_dict() writes it: rounded to 3 decimals, top score, gap and spread
// floored at 0 and the others clamped to [0,1], its own band and flag.
func (e *Engine) reportRetrieval(m *retrievalMetrics) {
	r := e.a.ragObject()
	*r = RAGConfidence{
		OverallConfidence:  round3(m.overall),
		TopScore:           round3(maxf(0, m.top)),
		ScoreGap:           round3(maxf(0, m.gap)),
		ScoreSpread:        round3(maxf(0, m.spread)),
		ConsensusCount:     m.consensus,
		BM25DenseAgreement: round3(clamp01(m.agreement)),
		RerankerImpact:     round3(clamp01(m.rerankerImpact)),
		GraphSupport:       m.graphSupport,
		DocumentDiversity:  round3(clamp01(m.diversity)),
	}
	b := &scorerBands[len(scorerBands)-1]
	for i := range scorerBands {
		if m.overall >= scorerBands[i].min {
			b = &scorerBands[i]
			break
		}
	}
	r.Interpretation, r.ShouldFlagForReview = b.interpretation, b.flag
}

// retrievalRecs turns the metrics into specific advice, in a fixed order.
func (e *Engine) retrievalRecs(m *retrievalMetrics, docs int) {
	if m.agreementPairs >= 2 && m.agreement < 0.5 {
		b := append(e.msg(), "BM25 and dense rankings disagree (agreement "...)
		b = appendFixed(b, m.agreement, 2)
		e.a.recommend(e.done(append(b, "): try query expansion, or run each retriever separately and merge the results."...)))
	}
	if m.top < 0.5 {
		b := append(e.msg(), "Top score is low ("...)
		b = appendFixed(b, m.top, 2)
		e.a.recommend(e.done(append(b, "): the corpus may not cover this question; rephrase the query or add content on this topic."...)))
	}
	if m.n > 1 && m.gap < 0.05 {
		b := append(e.msg(), "No clear winner (gap "...)
		b = appendFixed(b, m.gap, 2)
		e.a.recommend(e.done(append(b, " between the top two chunks): narrow the query or rerank with a cross-encoder."...)))
	}
	if m.consensus == 0 {
		b := append(e.msg(), "No chunk scores at or above "...)
		b = appendFixed(b, e.policy.Retrieval.ConsensusThreshold, 2)
		e.a.recommend(e.done(append(b, ": treat any answer as unverified."...)))
	}
	if m.graphGiven && !m.graphSupport {
		e.a.recommend("No knowledge-graph support: consider graph-based (multi-hop) retrieval.")
	}
	if m.n >= 3 && m.diversity > 0.8 {
		b := append(e.msg(), "Results are scattered across "...)
		b = strconv.AppendInt(b, int64(docs), 10)
		e.a.recommend(e.done(append(b, " documents: split the question or filter by document."...)))
	}
	if m.rerankerImpact > 0.5 {
		b := append(e.msg(), "The reranker reordered the first-stage results substantially (impact "...)
		b = appendFixed(b, m.rerankerImpact, 2)
		e.a.recommend(e.done(append(b, "): check the first-stage retriever's recall."...)))
	}
}
