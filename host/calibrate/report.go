package calibrate

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/ctxgate/ctxgate/gate"
)

// Report is what a calibration did and what it guarantees.
type Report struct {
	Base             PolicyRef `json:"base"`
	Policy           PolicyRef `json:"policy"`
	Target           string    `json:"target"` // "hallucination" or "error"
	Alpha            float64   `json:"alpha"`
	Confidence       float64   `json:"confidence"`
	Seed             uint64    `json:"seed"`
	CalibrationShare float64   `json:"calibration_share"`
	TestShare        float64   `json:"test_share"`
	Examples         Counts    `json:"examples"`
	// FitJoinedCalibration is true when no model could be fitted on the
	// fit split, and its examples calibrated the threshold instead.
	FitJoinedCalibration bool        `json:"fit_joined_calibration"`
	Saturations          Saturations `json:"saturations"`
	Models               []ModelFit  `json:"models"`
	Bound                Bound       `json:"bound"`
	// Splits are the written policy's decisions on each split, through
	// the gate. The fit split's rates are in-sample (optimistic).
	Splits []Rates `json:"splits"`
	// AUROC is over every example the weights were not fitted on (the
	// calibration and test splits): the written policy's confidence
	// against the base's.
	AUROC AUROCComparison `json:"auroc"`
}

// PolicyRef names a policy as decisions do.
type PolicyRef struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

func refOf(r gate.PolicyRef) PolicyRef { return PolicyRef{r.Name, r.Version, r.SHA256} }

// Counts are the examples behind a calibration.
type Counts struct {
	Examples int `json:"examples"` // as given
	// Duplicates are exact repeats (the same request, the same label),
	// left out: the counts below are of the distinct examples.
	Duplicates int `json:"duplicates"`
	Positive   int `json:"positive"` // labeled 1
	Negative   int `json:"negative"` // labeled 0
	// Groups is the effective number of independent examples: examples
	// sharing a group, or a request, are one (evidence.go).
	Groups int `json:"groups"`
}

// count counts the distinct examples' labels.
func (c *Counts) count(rows []row) {
	for _, r := range rows {
		if r.label {
			c.Positive++
		} else {
			c.Negative++
		}
	}
}

// Saturations are the bm25 and sparse saturations written, the base's,
// and whether the data chose them (the fit split's median best score).
type Saturations struct {
	BM25           float64 `json:"bm25"`
	Sparse         float64 `json:"sparse"`
	BaseBM25       float64 `json:"base_bm25"`
	BaseSparse     float64 `json:"base_sparse"`
	BM25FromData   bool    `json:"bm25_from_data"`
	SparseFromData bool    `json:"sparse_from_data"`
	// VectorCenter and VectorScale place top_vector (0: the cosine level);
	// VectorFromData when the fit split's best vector similarities chose
	// them (their median and spread).
	VectorCenter   float64 `json:"vector_center"`
	VectorScale    float64 `json:"vector_scale"`
	VectorFromData bool    `json:"vector_from_data"`
}

// Bound is the guarantee and how it was computed.
type Bound struct {
	Statement string  `json:"statement"` // the guarantee in one sentence
	Method    string  `json:"method"`
	Rate      string  `json:"rate"`  // "hallucination" or "error"
	Alpha     float64 `json:"alpha"` // the bound
	Delta     float64 `json:"delta"` // 1 - confidence
	// N independent calibration examples (groups: evidence.go) carry the
	// rate's label (0 for hallucination, 1 for error); K of them fall on
	// the wrong side of the chosen threshold (a group does when any of its
	// examples of that label does); PValue = P(Binomial(N, Alpha) <= K) <=
	// Delta. Examples is the number of calibration examples of the label in
	// those N groups.
	N        int     `json:"n"`
	K        int     `json:"k"`
	PValue   float64 `json:"p_value"`
	Examples int     `json:"examples"`
	// MaxK is the most of N the test could let through at all; MinN the
	// fewest examples for which any threshold can pass.
	MaxK int `json:"max_k"`
	MinN int `json:"min_n"`
	// Tested thresholds, the chosen one included; Candidates in all.
	Tested     int `json:"tested"`
	Candidates int `json:"candidates"`
	// The first threshold that failed, when the sequence stopped on one.
	Stopped    bool    `json:"stopped"`
	NextK      int     `json:"next_k,omitempty"`
	NextPValue float64 `json:"next_p_value,omitempty"`
	// Threshold is the chosen threshold as the fitted models' probability;
	// the written policy answers from AnswerMin (the answering band's
	// min) and injects from InjectMin (-1: no inject band).
	Threshold float64 `json:"threshold"`
	AnswerMin float64 `json:"answer_min"`
	InjectMin float64 `json:"inject_min"`
}

func bound(o Options, b *base, ch choice) Bound {
	delta := 1 - o.Confidence
	side := "answered"
	if o.Target == Error {
		side = "withheld"
	}
	bd := Bound{
		Rate: o.Target.String(), Alpha: o.Alpha, Delta: math.Round(delta*1e12) / 1e12, // 0.1, not 0.09999999999999998
		N: ch.N, K: ch.K, PValue: ch.P, Examples: ch.Examples, MaxK: MaxWrong(ch.N, o.Alpha, delta), MinN: MinExamples(o.Alpha, delta),
		Tested: ch.Tested, Candidates: ch.Distinct + 1,
		NextK: ch.NextK, NextPValue: ch.NextP, Stopped: ch.HasNext,
		Threshold: sigmoid(ch.Threshold), AnswerMin: b.answerMin, InjectMin: b.injectMin,
	}
	bd.Method = "Learn-then-Test with fixed-sequence testing: thresholds half way between the calibration examples' log-odds, tested from the " +
		map[bool]string{true: "strictest", false: "most lenient"}[o.Target == Hallucination] +
		" on, each with the exact binomial p-value P(Binomial(N, alpha) <= K) for K of the N independent calibration examples labeled " +
		strconv.Itoa(b2i(o.Target.label())) + " " + side + " (repeats, and examples sharing a group, count once); the last threshold before the first p-value above delta is chosen"
	bd.Statement = "With probability at least " + show(o.Confidence) + " over the calibration sample, the " + bd.Rate +
		" rate (" + map[bool]string{true: "answered among examples whose evidence does not answer", false: "withheld among examples whose evidence answers"}[o.Target == Hallucination] +
		") of this policy on new data from the same source is at most " + show(o.Alpha) +
		": " + strconv.Itoa(ch.K) + " of " + strconv.Itoa(ch.N) + " independent calibration examples labeled " + strconv.Itoa(b2i(o.Target.label())) +
		" " + side + ", p = " + strconv.FormatFloat(ch.P, 'g', 3, 64) + " <= " + show(delta) + "."
	return bd
}

// Rates are a policy's decisions on one split.
type Rates struct {
	Split            string `json:"split"`
	Examples         int    `json:"examples"`
	Positive         int    `json:"positive"`
	Negative         int    `json:"negative"`
	AnsweredPositive int    `json:"answered_positive"`
	AnsweredNegative int    `json:"answered_negative"`
	InjectedPositive int    `json:"injected_positive"`
	InjectedNegative int    `json:"injected_negative"`
}

func (r *Rates) add(label bool, a gate.Action) {
	r.Examples++
	if label {
		r.Positive++
	} else {
		r.Negative++
	}
	switch {
	case a == gate.ActionInject && label:
		r.InjectedPositive++
	case a == gate.ActionInject:
		r.InjectedNegative++
	}
	switch {
	case answers(a) && label:
		r.AnsweredPositive++
	case answers(a):
		r.AnsweredNegative++
	}
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// Hallucination is the share of examples labeled 0 answered.
func (r Rates) Hallucination() float64 { return ratio(r.AnsweredNegative, r.Negative) }

// Error is the share of examples labeled 1 withheld.
func (r Rates) Error() float64 { return ratio(r.Positive-r.AnsweredPositive, r.Positive) }

// Coverage is the share of examples answered.
func (r Rates) Coverage() float64 {
	return ratio(r.AnsweredPositive+r.AnsweredNegative, r.Examples)
}

// InjectHallucination is the share of examples labeled 0 injected (the
// confident band: answered without a caveat).
func (r Rates) InjectHallucination() float64 { return ratio(r.InjectedNegative, r.Negative) }

// MarshalJSON writes the counts and the rates; a rate without examples
// to be a share of is left out.
func (r Rates) MarshalJSON() ([]byte, error) {
	type counts Rates
	return json.Marshal(struct {
		counts
		Hallucination       *float64 `json:"hallucination_rate,omitempty"`
		Error               *float64 `json:"error_rate,omitempty"`
		Coverage            *float64 `json:"coverage,omitempty"`
		InjectHallucination *float64 `json:"inject_hallucination_rate,omitempty"`
	}{counts(r), opt(r.Hallucination()), opt(r.Error()), opt(r.Coverage()), opt(r.InjectHallucination())})
}

// MarshalJSON leaves out an interval's NaN ends.
func (i Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Value *float64 `json:"value,omitempty"`
		Lo    *float64 `json:"lo,omitempty"`
		Hi    *float64 `json:"hi,omitempty"`
	}{opt(i.Value), opt(i.Lo), opt(i.Hi)})
}

func opt(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
