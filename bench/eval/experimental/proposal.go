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
	// chunk_relevance (version 3): sigmoid(RelB + RelVec·v + RelTopGap·(top−v)
	// + RelBoth·both), a chunk without a vector score taking v = top −
	// RelMissingGap. Fitted on DL19 tune over requests of 5, 10 and 20
	// chunks as the logistic of (v − RelLambda·top) and both, then unfolded:
	// RelVec = w·(1−RelLambda), RelTopGap = −w·RelLambda (mixk_test.go).
	RelB, RelVec, RelTopGap, RelBoth = -9.7964, 11.2182, -44.8727, 1.3228
	RelLambda, RelMissingGap         = 0.8, 0.05
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

// RelevanceScores is chunk_relevance for every chunk of a request: the raw
// vector score and its distance below the request's best, plus whether both
// retrievers returned the chunk. No term depends on how many chunks the
// request has (the request's lowest score did, in version 2).
func RelevanceScores(ps []Passage) []float64 {
	top, any := 0.0, false
	for _, p := range ps {
		if p.HasVec && (!any || p.Vector > top) {
			top, any = p.Vector, true
		}
	}
	var out []float64
	for _, p := range ps {
		v, both := top-RelMissingGap, 0.0
		if p.HasVec {
			v = p.Vector
			if p.HasBM {
				both = 1
			}
		}
		out = append(out, sig(RelB+RelVec*v+RelTopGap*(top-v)+RelBoth*both))
	}
	return out
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
		score = RelevanceScores(ps)
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
