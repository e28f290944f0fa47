package experimental

import (
	"math"

	"github.com/ctxgate/ctxgate/bench/eval"
)

// The proposed default-policy signals (../PROPOSAL.md), with the weights
// fitted on the tuning halves by FitLogistic (3000 steps, rate 0.5, L2
// 1e-3) and folded back to raw features. TestProposalWeights refits them
// and fails if these constants drift from what the data gives.
var (
	// answer_coverage: sigmoid(LexB + LexCov·coverage_text + LexLen·sqrt(tokens)),
	// fitted on ClapNQ tune.
	LexB, LexCov, LexLen = 0.3946, 4.5741, -0.1881
	// chunk_relevance: sigmoid(RelB + RelTopGap·(top-v) + RelGap·(v-low) + RelBoth·both),
	// fitted on DL19 tune, hybrid top 20.
	RelB, RelTopGap, RelGap, RelBoth = -0.7525, -45.0804, 27.3124, 1.3156
	// Operating points chosen on the tune halves (see TestProposalThresholds).
	AnswerThreshold = 0.55
	KeepThreshold   = 0.35
)

// LexicalFeatures are the inputs of answer_coverage for one chunk: the
// query-term coverage of the chunk's text (not its title: a title is on
// topic for answerable and unanswerable questions alike) and the square root
// of its token count.
func LexicalFeatures(query, text string) (cov, sqrtTok float64) {
	return Coverage(query, text), math.Sqrt(TokenCount(text))
}

// AnswerCoverage is the lexical per-chunk probability that the chunk answers.
func AnswerCoverage(query, text string) float64 {
	c, s := LexicalFeatures(query, text)
	return sig(LexB + LexCov*c + LexLen*s)
}

// RelevanceFeatures are the inputs of chunk_relevance for every chunk of a
// request: distance below the request's best vector score, distance above
// its lowest (missing vector scores take the lowest present one), and
// whether both retrievers returned the chunk.
func RelevanceFeatures(ps []Passage) (topGap, gap, both []float64) {
	for _, f := range Features(ps) {
		topGap, gap, both = append(topGap, f.VecTopGap), append(gap, f.VecGap), append(both, f.BothPresent)
	}
	return
}

// Proposed decides like the proposed default: per-chunk score is
// chunk_relevance when the request has vector scores, else answer_coverage;
// confidence is the best chunk's answer_coverage (the query-level signal;
// DL19 cannot tune a score-based one, see PROPOSAL.md).
func Proposed(r *eval.Request) (conf float64, score []float64, kept []bool) {
	var ps []Passage
	hasVec := false
	for _, c := range r.Chunks {
		ps = append(ps, Passage{Text: c.Text, Vector: c.Vector, BM25: c.BM25, HasVec: c.HasVector, HasBM: c.HasBM25})
		hasVec = hasVec || c.HasVector
	}
	if hasVec {
		tg, g, b := RelevanceFeatures(ps)
		for i := range ps {
			score = append(score, sig(RelB+RelTopGap*tg[i]+RelGap*g[i]+RelBoth*b[i]))
		}
	}
	for i, c := range r.Chunks {
		a := AnswerCoverage(r.Query, c.Text)
		if a > conf {
			conf = a
		}
		if !hasVec {
			score = append(score, a)
		}
		kept = append(kept, score[i] >= KeepThreshold)
	}
	return conf, score, kept
}
