package gate

import (
	"math"
)

// signals.answer_coverage: the default policy's lexical signal, fitted on
// public labeled data and measured held out (bench/eval/PROPOSAL.md,
// docs/quality.md). A logistic model whose weights are policy knobs; the
// defaults are the fitted values. Only + - * /, math.Sqrt and the
// deterministic sigmoid are used, so a decision is bit-identical natively
// and in every Wasm build.

// SigAnswerCoverage is the best chunk's answer_coverage.
const SigAnswerCoverage = "answer_coverage"

// OrderAnswer orders chunks by answer_coverage.
const OrderAnswer = "answer_coverage"

// answerMinRunes is the shortest answer_coverage term (sufficiency
// coverage's rule, fixed here so the signal does not move with
// signals.sufficiency.min_term_runes).
const answerMinRunes = 3

var answerCoverageGroup = signalGroup{
	key:     "answer_coverage",
	reports: []string{SigAnswerCoverage},
	order:   OrderAnswer,
	on:      func(p *Policy) bool { return p.AnswerCoverage != nil },
	read:    readAnswerCoverage,
	check: func(p *Policy) *Error {
		a := p.AnswerCoverage
		for _, w := range [...]struct {
			f string
			v float64
		}{{"bias", a.Bias}, {"coverage", a.Coverage}, {"sqrt_tokens", a.SqrtTokens}} {
			if !logitWeight(w.v) {
				return policyErr("signals.answer_coverage."+w.f, "must be a finite number in [-100,100]")
			}
		}
		return nil
	},
	state: func() groupState { return &answerCoverageState{} },
}

// AnswerCoverageConfig is the logistic weights of answer_coverage, the lexical
// chance that a chunk's text answers the query:
// sigmoid(Bias + Coverage·coverage + SqrtTokens·sqrt(tokens)). The defaults
// are fitted on ClapNQ's tuning half (bench/eval/PROPOSAL.md).
type AnswerCoverageConfig struct {
	Bias       float64 // bias (0.3946)
	Coverage   float64 // coverage: weight of the share of query terms in the text (4.5741)
	SqrtTokens float64 // sqrt_tokens: weight of sqrt(token count of the text) (-0.1881)
}

func defaultAnswerCoverage() AnswerCoverageConfig {
	return AnswerCoverageConfig{Bias: 0.3946, Coverage: 4.5741, SqrtTokens: -0.1881}
}

func readAnswerCoverage(p *Policy, o obj) *Error {
	if err := o.Strict("bias coverage sqrt_tokens"); err != nil {
		return err
	}
	c := defaultAnswerCoverage()
	for _, f := range [...]struct {
		k string
		v *float64
	}{{"bias", &c.Bias}, {"coverage", &c.Coverage}, {"sqrt_tokens", &c.SqrtTokens}} {
		if err := readNum(o, f.k, f.v); err != nil {
			return err
		}
	}
	p.AnswerCoverage = &c
	return nil
}

// answerCoverageState holds each chunk's answer_coverage.
type answerCoverageState struct{ answer []float64 }

// run scores every chunk with sigmoid(bias + coverage·cov +
// sqrt_tokens·sqrt(tokens)), where cov is the share of the query's terms (>=
// 3 runes, on neither the quality nor the coverage stop list, whole tokens)
// found in the chunk's text and tokens is the text's token count. The title
// is left out: it is on topic for answerable and unanswerable questions
// alike. The length term says that, at equal coverage, a shorter passage is
// more likely to answer. The query-level signal is the best chunk's, so a
// new chunk never lowers it.
func (s *answerCoverageState) run(e *Engine, _ *Request) {
	if len(e.work) == 0 {
		return
	}
	e.addSignal(SigAnswerCoverage, s.score(e, e.policy.AnswerCoverage))
}

// score sets every chunk's answer_coverage under cfg and returns the best.
func (s *answerCoverageState) score(e *Engine, cfg *AnswerCoverageConfig) float64 {
	w := e.work
	s.answer = resizeFloat(s.answer, len(w))
	best := 0.0
	for i := range w {
		cov := 1.0 // no term: nothing is missing, as in sufficiency coverage
		if e.q.nAnswer > 0 {
			cov = float64(w[i].answerHits) / float64(e.q.nAnswer)
		}
		x := cfg.Bias + float64(cfg.Coverage*cov) + float64(cfg.SqrtTokens*math.Sqrt(float64(w[i].words)))
		s.answer[i] = clamp01(snap(sigmoid(x)))
		best = maxf(best, s.answer[i])
	}
	return best
}

func (s *answerCoverageState) scored() bool             { return true }
func (s *answerCoverageState) chunkScore(i int) float64 { return s.answer[i] }
