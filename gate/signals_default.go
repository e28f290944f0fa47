package gate

import "math"

// The default policy's own signals, fitted on public labeled data and
// measured held out (bench/eval/PROPOSAL.md, docs/quality.md). Both are
// logistic models whose weights are policy knobs; the defaults are the
// fitted values. Only + - * /, math.Sqrt and the deterministic sigmoid are
// used, so a decision is bit-identical natively and in every Wasm build.

// answerMinRunes is the shortest answer_coverage term (sufficiency coverage's rule, fixed
// here so the signal does not move with signals.sufficiency.min_term_runes).
const answerMinRunes = 3

// signalAnswerCoverage scores every chunk with
// sigmoid(bias + coverage·cov + sqrt_tokens·sqrt(tokens)), where cov is the
// share of the query's terms (>= 3 runes, on neither the quality nor the
// coverage stop list, whole tokens) found in the chunk's text and tokens is the
// text's token count. The title is left out: it is on topic for answerable
// and unanswerable questions alike. The length term says that, at equal
// coverage, a shorter passage is more likely to answer. The query-level
// signal is the best chunk's, so a new chunk never lowers it.
func (e *Engine) signalAnswerCoverage() {
	if len(e.work) == 0 {
		return
	}
	e.addSignal(SigAnswerCoverage, e.scoreAnswerCoverage(e.policy.AnswerCoverage))
}

// scoreAnswerCoverage sets every chunk's answer_coverage under cfg and
// returns the best.
func (e *Engine) scoreAnswerCoverage(cfg *AnswerCoverageConfig) float64 {
	w := e.work
	best := 0.0
	for i := range w {
		cov := 1.0 // no term: nothing is missing, as in sufficiency coverage
		if e.q.nAnswer > 0 {
			cov = float64(w[i].answerHits) / float64(e.q.nAnswer)
		}
		x := cfg.Bias + float64(cfg.Coverage*cov) + float64(cfg.SqrtTokens*math.Sqrt(float64(w[i].words)))
		w[i].answer = clamp01(snap(sigmoid(x)))
		best = maxf(best, w[i].answer)
	}
	return best
}

// signalChunkRelevance scores every chunk by its raw vector score, how far
// it sits below the request's best (top), and whether both retrievers
// returned it: sigmoid(bias + vector·v + below_top·(top−v) + both·[vector
// and bm25]). Mostly relative (below_top dominates: raw cosines of one
// embedding model are not comparable across queries) with some absolute
// level (with few chunks, how good the best one is matters too). No term
// depends on how many chunks the request has, unlike the request's lowest
// score in version 2, which made a 5-chunk request rank worse than raw
// cosine. A chunk without a vector score takes v = top − missing_gap: the
// dense retriever did not return it, so it sits below the best by a fixed
// amount, not below the request's worst (which moves with k). Reported
// only when some chunk has a vector score; then the relevance_min filter
// applies to the chunks still kept, with the quality filter's global fallback (if it
// would drop them all, all stay and say so).
func (e *Engine) signalChunkRelevance() {
	cfg := e.policy.ChunkRelevance
	w := e.work
	top, any := 0.0, false
	for i := range w {
		if w[i].hasVector && (!any || w[i].vector > top) {
			top, any = w[i].vector, true
		}
	}
	if !any {
		return
	}
	best := 0.0
	for i := range w {
		v := top - cfg.MissingGap
		if w[i].hasVector {
			v = w[i].vector
		}
		both := 0.0
		if w[i].hasVector && w[i].hasBM25 {
			both = 1
		}
		x := cfg.Bias + float64(cfg.Vector*v) + float64(cfg.BelowTop*(top-v)) + float64(cfg.Both*both)
		w[i].relevance = clamp01(snap(sigmoid(x)))
		w[i].hasRelevance = true
		best = maxf(best, w[i].relevance)
	}
	e.addSignal(SigChunkRelevance, best)
	f := &e.policy.Filters
	if !f.HasRelevanceMin {
		return
	}
	after := 0
	for i := range w {
		if w[i].kept && w[i].relevance >= f.RelevanceMin {
			after++
		}
	}
	for i := range w {
		if !w[i].kept {
			continue
		}
		if after == 0 {
			w[i].reason = ReasonRelevanceFallback
		} else if w[i].relevance < f.RelevanceMin {
			w[i].kept = false
			w[i].reason = ReasonRelevanceLow
		}
	}
}
