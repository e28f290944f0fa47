package calibrate

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Target is the rate a calibration bounds.
type Target int

const (
	// Hallucination is the share of examples labeled 0 (the evidence does
	// not answer) that the gate answers (inject or caveat).
	Hallucination Target = iota + 1
	// Error is the share of examples labeled 1 (the evidence answers)
	// that the gate withholds (fallback or refuse).
	Error
)

func (t Target) String() string {
	switch t {
	case Hallucination:
		return "hallucination"
	case Error:
		return "error"
	}
	return "unknown"
}

// label is the label of the examples a target's rate is over.
func (t Target) label() bool { return t == Error }

// ErrNoGuarantee is returned (wrapped, with the reason) when no threshold
// keeps the target rate within the bound at the asked confidence on the
// calibration examples, or when the only one that does makes the gate
// useless (it would answer nothing, or withhold nothing). No policy is
// written then.
var ErrNoGuarantee = errors.New("no guarantee")

// point is one calibration example for the test: its logit under the
// fitted models, +Inf or -Inf when the gate's answer does not depend on the
// models (no chunks: the policy's no_chunks outcome), its label, and its
// independent group (evidence.go), numbered from 0.
type point struct {
	logit float64
	label bool
	group int
}

func (p point) answered(threshold float64) bool { return p.logit >= threshold }

// minGap is the least distance, in log-odds, between two calibration
// logits for a threshold to go between them. Thresholds sit half way, so
// every calibration example is at least minGap/2 from one: the written
// policy's rounding (biases to 6 decimals) and the gate's confidence
// resolution (1e-9) cannot move an example across it.
const minGap = 2e-4

// choice is what the fixed-sequence test chose.
type choice struct {
	Threshold float64 // answer when the logit is >= Threshold
	N         int     // independent calibration groups with examples of the target's label
	Examples  int     // the calibration examples of the target's label in them
	K         int     // of the N, those with an example on the wrong side of Threshold
	P         float64 // BinomialCDF(K, N, alpha)
	Tested    int     // thresholds tested, the chosen one included
	// Next is the first threshold that failed (K, P), if the sequence did
	// not run out.
	NextK    int
	NextP    float64
	HasNext  bool
	Safe     bool // the chosen threshold is the sequence's first: answer none (hallucination) or all (error)
	Distinct int  // calibration logits far enough apart to split
}

// learnThenTest picks a threshold by Learn-then-Test (Angelopoulos, Bates,
// Candès, Jordan, Lei 2021) with fixed-sequence testing. The candidate
// thresholds lie half way between neighbouring calibration logits, plus one
// beyond each end. They are tested in order from the safe end (for
// hallucination the strictest, answering nothing; for error the most
// lenient, answering everything) towards the other, each with the null
// hypothesis "the target rate at this threshold is more than alpha" and the
// exact binomial p-value P(Binomial(N, alpha) <= K). The trials are
// independent groups, not examples (evidence.go): N groups hold calibration
// examples of the target's label, and K of them have at least one such
// example on the wrong side. Repeats of one question are one trial, so they
// cannot buy a bound; the rate bounded is then the share of new groups
// (questions) with an example on the wrong side, which is at least the
// share of their examples. The sequence stops at the first p-value above
// delta; the last threshold before it is chosen.
//
// Why this holds with probability at least 1-delta even though the
// candidates come from the calibration data: the rate and K are both
// monotone in the threshold. Let t* be where the true rate crosses alpha
// going from the safe end (a property of the data's source, not of the
// sample): every threshold past it has a rate above alpha, and the rate at
// t* itself is at least alpha. Choosing a threshold past t* means its test
// passed; K at t* is at most K there, so the p-value at t* is at most delta
// too, and since K at t* is binomial with a rate of at least alpha, that
// happens with probability at most delta. The calibration examples must be
// exchangeable with the new data and independent of the fitted models.
func learnThenTest(pts []point, target Target, alpha, delta float64) (choice, error) {
	var levels []float64
	groups, examples := 0, 0
	for _, p := range pts {
		if !math.IsInf(p.logit, 0) {
			levels = append(levels, p.logit)
		}
		groups = max(groups, p.group+1)
		if p.label == target.label() {
			examples++
		}
	}
	// count is the number of groups with an example of the target's label
	// for which bad holds.
	seen := make([]bool, groups)
	count := func(bad func(point) bool) int {
		clear(seen)
		k := 0
		for _, p := range pts {
			if p.label == target.label() && !seen[p.group] && bad(p) {
				seen[p.group] = true
				k++
			}
		}
		return k
	}
	wrong := func(th float64) int { return count(func(p point) bool { return p.answered(th) != p.label }) }
	n := count(func(point) bool { return true })
	if n == 0 {
		return choice{}, fmt.Errorf("%w: the calibration split has no example labeled %d", ErrNoGuarantee, b2i(target.label()))
	}
	if len(levels) == 0 {
		return choice{}, fmt.Errorf("%w: no calibration example has chunks, so no threshold changes what the gate does", ErrNoGuarantee)
	}
	sort.Float64s(levels)
	cuts := []float64{levels[0] - 1}
	distinct := 1
	for i := 1; i < len(levels); i++ {
		if levels[i]-levels[i-1] >= minGap {
			cuts = append(cuts, (levels[i]+levels[i-1])/2)
			distinct++
		}
	}
	cuts = append(cuts, levels[len(levels)-1]+1)
	if target == Hallucination {
		for i, j := 0, len(cuts)-1; i < j; i, j = i+1, j-1 {
			cuts[i], cuts[j] = cuts[j], cuts[i]
		}
	}
	c := choice{N: n, Examples: examples, Distinct: distinct}
	for i, th := range cuts {
		k := wrong(th)
		pv := BinomialCDF(k, n, alpha)
		if pv > delta {
			if i == 0 {
				return c, noThreshold(target, n, k, alpha, delta)
			}
			c.NextK, c.NextP, c.HasNext = k, pv, true
			break
		}
		c.Threshold, c.K, c.P, c.Tested, c.Safe = th, k, pv, i+1, i == 0
	}
	return c, nil
}

// noThreshold explains why even the safe end failed.
func noThreshold(target Target, n, k int, alpha, delta float64) error {
	need := MinExamples(alpha, delta)
	if k == 0 {
		return fmt.Errorf("%w: the calibration split has %d independent examples labeled %d (repeats, and examples sharing a group, count once); keeping the %s rate at most %g with confidence %g needs at least %d (more examples, a looser bound or a lower confidence)",
			ErrNoGuarantee, n, b2i(target.label()), target, alpha, 1-delta, need)
	}
	return fmt.Errorf("%w: %d of the %d independent calibration examples labeled %d are decided without the bands (no chunks), and that alone breaks a %s rate at most %g with confidence %g",
		ErrNoGuarantee, k, n, b2i(target.label()), target, alpha, 1-delta)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
