package calibrate

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/ctxgate/ctxgate/gate"
)

// nf is the number of answerability features (gate.FeatureNames).
const nf = len(gate.FeatureNames)

// Feature indices calibration treats specially: the raw score levels.
var (
	featTopVector = featureIndex("top_vector")
	featTopBM25   = featureIndex("top_bm25")
	featTopSparse = featureIndex("top_sparse")
)

func featureIndex(name string) int {
	for i, n := range gate.FeatureNames {
		if n == name {
			return i
		}
	}
	panic("calibrate: gate has no feature " + name)
}

// row is one example as the fit and the test see it.
type row struct {
	split  split
	label  bool
	group  string
	scored bool // the scored model decides it (else the text model)
	// fixed is +1 when the gate answers whatever the models say, -1 when
	// it withholds whatever they say (no chunks, or none kept: the
	// policy's no_chunks / none_kept outcome), 0 when the bands decide.
	fixed int8
	f     [nf]float64
	// The best raw bm25 and sparse scores (0 when absent), for choosing
	// the saturations, and the best vector similarity as the gate reads it
	// under the request's score conventions (hasTopVector when present),
	// for placing top_vector on the deployment's scale.
	topBM25, topSparse float64
	topVector          float64
	hasTopVector       bool
}

// extractRows computes every example's features and regime with engine e,
// and which examples the bands do not decide; keys are the examples' group
// keys.
func extractRows(e *gate.Engine, exs []Example, keys []string, splits []split) ([]row, error) {
	rows := make([]row, len(exs))
	for i := range exs {
		ex := &exs[i]
		fs, scored, err := e.AnswerabilityFeatures(ex.Request)
		if err != nil {
			return nil, fmt.Errorf("%s: request: %w", ex.where(i), err)
		}
		r := row{split: splits[i], label: ex.Label, group: keys[i], scored: scored}
		for j, s := range fs {
			r.f[j] = s.Value
		}
		d, err := e.Decide(ex.Request)
		if err != nil {
			return nil, fmt.Errorf("%s: request: %w", ex.where(i), err)
		}
		r.fixed = fixedOutcome(e.Policy(), d)
		top, err := e.TopScores(ex.Request)
		if err != nil {
			return nil, fmt.Errorf("%s: request: %w", ex.where(i), err)
		}
		r.topBM25, r.topSparse = math.Max(0, top.BM25), math.Max(0, top.Sparse)
		r.topVector, r.hasTopVector = top.Vector, top.HasVector
		rows[i] = r
	}
	return rows, nil
}

// refreshFeatures recomputes the features with engine e (new saturations).
func refreshFeatures(e *gate.Engine, exs []Example, rows []row) error {
	for i := range rows {
		fs, _, err := e.AnswerabilityFeatures(exs[i].Request)
		if err != nil {
			return fmt.Errorf("%s: request: %w", exs[i].where(i), err)
		}
		for j, s := range fs {
			rows[i].f[j] = s.Value
		}
	}
	return nil
}

// fixedOutcome tells whether the bands decided d: a decision without
// chunks takes no_chunks, one whose chunks the evidence floor all dropped
// takes none_kept (a band's fallback also drops every chunk, but says
// so with confidence_gate_fired).
func fixedOutcome(p *gate.Policy, d *gate.Decision) int8 {
	var out gate.Outcome
	switch {
	case len(d.Chunks) == 0:
		out = p.NoChunks
	case noneKept(d):
		out = p.NoneKept
	default:
		return 0
	}
	if answers(out.Action) {
		return 1
	}
	return -1
}

func noneKept(d *gate.Decision) bool {
	for _, c := range d.Chunks {
		if c.Kept || c.Reason == gate.ReasonGateFired {
			return false
		}
	}
	return true
}

// answers tells whether an action lets the model answer from the sources.
func answers(a gate.Action) bool { return a == gate.ActionInject || a == gate.ActionCaveat }

// logitOf is a model's log-odds for features f, summed exactly as the gate
// sums them (signalAnswerability), so that the threshold test sees the
// numbers the gate will compute.
func logitOf(m *gate.AnswerabilityModel, f *[nf]float64) float64 {
	x := m.Bias
	for i := range f {
		if m.Used[i] {
			x += float64(m.Weights[i] * f[i])
		}
	}
	return x
}

// median is the median of the positive values, 0 when there are none,
// rounded to 4 significant digits (as the policy writes it).
func median(xs []float64) float64 {
	var v []float64
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	m := v[len(v)/2]
	if len(v)%2 == 0 {
		m = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return sig4(m)
}

// sig4 rounds x to 4 significant digits.
func sig4(x float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 4, 64), 64)
	return r
}

// location is the median of xs and a robust spread, the interquartile
// range over 1.349 (the standard deviation, for normal data), each
// rounded to 4 significant digits as the policy writes them; 0, 0 with
// fewer than 4 values or no spread.
func location(xs []float64) (center, scale float64) {
	var v []float64
	for _, x := range xs {
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) < 4 {
		return 0, 0
	}
	sort.Float64s(v)
	q := func(p float64) float64 {
		pos := p * float64(len(v)-1)
		i := int(pos)
		if i+1 >= len(v) {
			return v[len(v)-1]
		}
		return v[i] + (pos-float64(i))*(v[i+1]-v[i])
	}
	center, scale = sig4(q(0.5)), sig4((q(0.75)-q(0.25))/1.349)
	if !(scale > 0) {
		return 0, 0
	}
	return center, scale
}
