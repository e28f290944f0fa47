package calibrate

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/internal/logistic"
)

// levelOrder is the order raw score levels are tried in: the semantic
// retriever's first (its level is what differs most between embedding and
// sparse models), then BM25's.
var levelOrder = []int{featTopVector, featTopSparse, featTopBM25}

// candidate is one model form over a regime's rows: the base model's
// log-odds as one column (its weights scaled together), or the base's
// features each as a column of its own; then raw score levels.
type candidate struct {
	// shift: the base's log-odds as they are, plus a fitted constant:
	// no weight changes, so only where the threshold falls can move
	// (what Learn-then-Test does anyway). It is what the other forms must
	// beat clearly.
	shift  bool
	base   bool  // the base's log-odds as one column
	feats  []int // else the base's features, one column each
	levels []int
}

func (c candidate) String() string {
	if c.shift {
		return "threshold only"
	}
	var parts []string
	if c.base {
		parts = append(parts, "base")
	}
	for _, i := range append(append([]int(nil), c.feats...), c.levels...) {
		parts = append(parts, gate.FeatureNames[i])
	}
	return strings.Join(parts, " + ")
}

func (c candidate) withLevel(i int) candidate {
	return candidate{base: c.base, feats: c.feats, levels: append(append([]int(nil), c.levels...), i)}
}

func (c candidate) x(r *row, base *gate.AnswerabilityModel) []float64 {
	x := make([]float64, 0, len(c.feats)+len(c.levels)+1)
	if c.base {
		x = append(x, logitOf(base, &r.f))
	}
	for _, i := range c.feats {
		x = append(x, r.f[i])
	}
	for _, i := range c.levels {
		x = append(x, r.f[i])
	}
	return x
}

// CVScore is one candidate's cross-validated log-loss.
type CVScore struct {
	Model  string  `json:"model"`
	Loss   float64 `json:"-"` // mean out-of-fold -log p(label) per group, nats; +Inf when no fold could be fitted
	Chosen bool    `json:"chosen,omitempty"`
}

// MarshalJSON leaves out a loss no fold could give.
func (c CVScore) MarshalJSON() ([]byte, error) {
	type plain CVScore
	return json.Marshal(struct {
		plain
		Loss *float64 `json:"log_loss,omitempty"`
	}{plain(c), opt(c.Loss)})
}

// ModelFit is what calibration did to one of the policy's models.
type ModelFit struct {
	Model    string `json:"model"` // "text" or "scored"
	Fitted   bool   `json:"fitted"`
	Note     string `json:"note"` // why it kept the base's weights, or what the fit chose
	Form     string `json:"form,omitempty"`
	Positive int    `json:"fit_positive"` // fit-split examples this model decides, labeled 1
	Negative int    `json:"fit_negative"` // and labeled 0
	// L2 is the penalty on the standardised weights (logistic.Fit).
	L2 float64   `json:"l2,omitempty"`
	CV []CVScore `json:"cross_validation,omitempty"`
	// Weights and Bias are the fitted model before the threshold moved
	// its bias (the written policy has Bias shifted).
	Weights map[string]float64 `json:"weights"`
	Bias    float64            `json:"bias"`

	model gate.AnswerabilityModel
}

// fitConfig is what fitting needs from the options.
type fitConfig struct {
	perWeight int     // fit examples of the rarer label needed per weight
	l2        float64 // 0: 1/n
	levels    bool
	seed      uint64
}

// minority is the count of the rarer label.
func (mf *ModelFit) minority() int { return min(mf.Positive, mf.Negative) }

// logit is form c's log-odds for r under the fitted model lm.
func (c candidate) logit(lm *logistic.Model, r *row, base *gate.AnswerabilityModel) float64 {
	if c.shift {
		return logitOf(base, &r.f) + lm.B
	}
	return lm.Logit(c.x(r, base))
}

// weights is how many weights a form fits (the bias not counted).
func (c candidate) weights() int {
	n := len(c.feats) + len(c.levels)
	if c.base {
		n++
	}
	return n
}

// cvFolds and cvRepeats: grouped k-fold cross-validation, repeated over
// differently seeded fold assignments to steady the estimate on few rows.
const (
	cvFolds   = 5
	cvRepeats = 3
)

// fitModel fits one regime's model on its fit rows (the bands decide
// them). The forms, simplest first:
//
//  1. the base model's log-odds scaled and shifted (one weight: its
//     ranking is kept, its probabilities are recalibrated);
//  2. that plus raw score levels present in the rows (top_vector,
//     top_sparse, top_bm25), added one at a time in that order while
//     each lowers the cross-validated log-loss clearly (clearlyBetter);
//  3. every feature of the base model, and the chosen levels, each with
//     its own weight, when that lowers it clearly again.
//
// A form is tried only when the rows hold cfg.perWeight examples of the
// rarer label per weight (affords); with too few for form 1 the base's
// weights are kept. A fitted scale of the base at or below 0, or a level
// weight at or below 0 (a higher best score must not lower confidence),
// rejects a form for the next simpler one: the data is then too thin to
// overrule what the base says.
//
// The penalty l2 on standardised weights defaults to 1/n (n examples): a
// standard normal prior on each standardised weight, strong on a few dozen
// examples and fading as they grow.
func fitModel(name string, rows []row, base *gate.AnswerabilityModel, cfg fitConfig) ModelFit {
	mf := ModelFit{Model: name, model: *base}
	for _, r := range rows {
		if r.label {
			mf.Positive++
		} else {
			mf.Negative++
		}
	}
	mf.fill()
	if !mf.affords(candidate{base: true}, cfg) {
		mf.Note = "kept the base's weights: the fit split has " + strconv.Itoa(mf.Positive) + " examples labeled 1 and " +
			strconv.Itoa(mf.Negative) + " labeled 0 that this model decides; fitting one weight needs " + strconv.Itoa(cfg.perWeight) + " of each"
		return mf
	}
	cv := func(c candidate) map[string]float64 {
		l := cvLosses(rows, c, base, cfg)
		mf.CV = append(mf.CV, CVScore{Model: c.String(), Loss: meanLoss(l)})
		return l
	}
	// Nested validation: the fit split's grouped cross-validation chooses
	// the form; the calibration split, which it never saw, sets the
	// threshold and the bound. Each larger form must beat the smaller one
	// clearly, starting from moving the threshold only.
	shift := candidate{shift: true}
	shiftLoss := cv(shift)
	cur := candidate{base: true}
	curLoss := cv(cur)
	if !clearlyBetter(curLoss, shiftLoss) {
		cur, curLoss = shift, shiftLoss
	}
	if cfg.levels {
		for _, i := range levelOrder {
			if base.Used[i] || !present(rows, i) {
				continue
			}
			next := candidate{base: true, levels: cur.levels}.withLevel(i)
			if !mf.affords(next, cfg) {
				break
			}
			if l := cv(next); clearlyBetter(l, curLoss) {
				cur, curLoss = next, l
			}
		}
	}
	refit := candidate{levels: cur.levels}
	for i, u := range base.Used {
		if u {
			refit.feats = append(refit.feats, i)
		}
	}
	if mf.affords(refit, cfg) {
		if l := cv(refit); clearlyBetter(l, curLoss) {
			cur = refit
		}
	}
	if cur.shift {
		mf.Form = shift.String()
		for k := range mf.CV {
			mf.CV[k].Chosen = mf.CV[k].Model == shift.String()
		}
		var tried []string
		for _, c := range mf.CV {
			if c.Model != shift.String() {
				tried = append(tried, c.Model)
			}
		}
		mf.Note = "moved the threshold only: on the fit split's grouped cross-validation no refitted form (" + strings.Join(tried, "; ") +
			") beat the base's own probabilities, shifted, by more than its standard error; the base's weights are kept"
		return mf
	}
	// The chosen form, else the simpler ones, until one fits sensibly.
	tries := []candidate{cur}
	if !cur.base {
		tries = append(tries, candidate{base: true, levels: cur.levels})
	}
	if len(cur.levels) > 0 {
		tries = append(tries, candidate{base: true})
	}
	for _, c := range tries {
		m, l2, err := fitCandidate(rows, c, base, cfg)
		if err != nil {
			continue
		}
		mf.Fitted, mf.Form, mf.L2, mf.model = true, c.String(), l2, m
		for k := range mf.CV {
			mf.CV[k].Chosen = mf.CV[k].Model == mf.Form
		}
		mf.Note = "fitted: " + mf.Form
		if c.String() != cur.String() {
			mf.Note += " (cross-validation chose " + cur.String() + ", whose fit weighs the base or a level at or below 0)"
		}
		mf.fill()
		return mf
	}
	mf.Note = "kept the base's weights: on the fit split the base model's log-odds get a weight at or below 0"
	return mf
}

// affords tells whether the fit rows can support form c: perWeight
// examples of the rarer label per weight (the events-per-variable rule of
// thumb for logistic regression, Peduzzi et al. 1996).
func (mf *ModelFit) affords(c candidate, cfg fitConfig) bool {
	return mf.minority() >= cfg.perWeight*c.weights()
}

// fill copies the model into the report's fields.
func (mf *ModelFit) fill() {
	mf.Weights = map[string]float64{}
	for i, u := range mf.model.Used {
		if u {
			mf.Weights[gate.FeatureNames[i]] = mf.model.Weights[i]
		}
	}
	mf.Bias = mf.model.Bias
}

// present tells whether a level is there to fit: nonzero on at least half
// the rows and not one constant value.
func present(rows []row, i int) bool {
	n := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		if r.f[i] > 0 {
			n++
		}
		lo, hi = math.Min(lo, r.f[i]), math.Max(hi, r.f[i])
	}
	return 2*n >= len(rows) && hi > lo
}

// errWrongWay rejects a fit whose base scale or level weight is <= 0.
var errWrongWay = errors.New("a weight the wrong way")

// fitCandidate fits form c on rows and returns it as a gate model, weights
// rounded to 4 decimals as the policy writes them.
func fitCandidate(rows []row, c candidate, base *gate.AnswerabilityModel, cfg fitConfig) (gate.AnswerabilityModel, float64, error) {
	lm, l2, err := fitRows(rows, c, base, cfg)
	if err != nil {
		return gate.AnswerabilityModel{}, 0, err
	}
	var m gate.AnswerabilityModel
	j := 0
	if c.base {
		a := lm.W[0]
		if a <= 0 {
			return m, 0, errWrongWay
		}
		j = 1
		m.Bias = a * base.Bias
		for i, u := range base.Used {
			if u {
				m.Used[i] = true
				m.Weights[i] += a * base.Weights[i]
			}
		}
	}
	for _, i := range c.feats {
		m.Used[i] = true
		m.Weights[i] += lm.W[j]
		j++
	}
	for _, i := range c.levels {
		if lm.W[j] <= 0 {
			return m, 0, errWrongWay
		}
		m.Used[i] = true
		m.Weights[i] += lm.W[j]
		j++
	}
	m.Bias += lm.B
	m.Bias = round4(m.Bias)
	for i := range m.Weights {
		m.Weights[i] = round4(m.Weights[i])
		if m.Used[i] && math.Abs(m.Weights[i]) > 100 {
			return m, 0, errors.New("a weight beyond 100")
		}
	}
	if math.Abs(m.Bias) > 100 {
		return m, 0, errors.New("a bias beyond 100")
	}
	return m, l2, nil
}

func fitRows(rows []row, c candidate, base *gate.AnswerabilityModel, cfg fitConfig) (*logistic.Model, float64, error) {
	if c.shift {
		b, err := fitShift(rows, base)
		return &logistic.Model{B: b}, 0, err
	}
	x := make([][]float64, len(rows))
	y := make([]bool, len(rows))
	for i := range rows {
		x[i], y[i] = c.x(&rows[i], base), rows[i].label
	}
	l2 := cfg.l2
	if l2 == 0 {
		l2 = 1 / float64(len(rows))
	}
	m, err := logistic.Fit(x, y, nil, l2)
	return m, l2, err
}

// cvLosses is form c's out-of-fold log-loss over rows, per group (mean
// over the group's rows and the repeats): grouped folds (a group's rows
// are held out together), cvRepeats seeded assignments. A fold whose
// training rows hold one label only is skipped, for every form alike.
// Empty when no fold could be fitted.
func cvLosses(rows []row, c candidate, base *gate.AnswerabilityModel, cfg fitConfig) map[string]float64 {
	groups := map[string]bool{}
	for _, r := range rows {
		groups[r.group] = true
	}
	k := min(cvFolds, len(groups))
	sum, cnt := map[string]float64{}, map[string]int{}
	if k < 2 {
		return sum
	}
	for rep := 0; rep < cvRepeats; rep++ {
		fold := make([]int, len(rows))
		for i, r := range rows {
			fold[i] = int(mix(cfg.seed^uint64(rep+1)*0x9e3779b97f4a7c15, r.group) % uint64(k))
		}
		for f := 0; f < k; f++ {
			var train, test []row
			for i, r := range rows {
				if fold[i] == f {
					test = append(test, r)
				} else {
					train = append(train, r)
				}
			}
			m, _, err := fitRows(train, c, base, cfg)
			if err != nil {
				continue
			}
			for i := range test {
				p := 1 / (1 + math.Exp(-c.logit(m, &test[i], base)))
				if !test[i].label {
					p = 1 - p
				}
				sum[test[i].group] -= math.Log(math.Max(p, 1e-12))
				cnt[test[i].group]++
			}
		}
	}
	for g := range sum {
		sum[g] /= float64(cnt[g])
	}
	return sum
}

func meanLoss(l map[string]float64) float64 {
	if len(l) == 0 {
		return math.Inf(1)
	}
	s := 0.0
	for _, v := range l {
		s += v
	}
	return s / float64(len(l))
}

// clearlyBetter is the one-standard-error rule (Breiman et al. 1984) on
// paired group losses: a larger form is preferred only when its mean
// loss is below the smaller one's by more than the standard error of the
// difference. On a few dozen examples that takes a strong signal; on
// thousands, a small one.
func clearlyBetter(cand, cur map[string]float64) bool {
	var d []float64
	for g, l := range cand {
		if c, ok := cur[g]; ok {
			d = append(d, l-c)
		}
	}
	if len(d) < 2 {
		return false
	}
	m := mean(d)
	v := 0.0
	for _, x := range d {
		v += (x - m) * (x - m)
	}
	se := math.Sqrt(v / float64(len(d)-1) / float64(len(d)))
	return m < -se
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// fitShift is the constant b that maximises the likelihood of
// sigmoid(base log-odds + b) on rows, by Newton's method on one variable
// (concave, so a few steps from 0 reach it).
func fitShift(rows []row, base *gate.AnswerabilityModel) (float64, error) {
	pos := 0
	for _, r := range rows {
		if r.label {
			pos++
		}
	}
	if pos == 0 || pos == len(rows) {
		return 0, logistic.ErrOneClass
	}
	b := 0.0
	for it := 0; it < 50; it++ {
		var g, h float64
		for i := range rows {
			p := 1 / (1 + math.Exp(-(logitOf(base, &rows[i].f) + b)))
			y := 0.0
			if rows[i].label {
				y = 1
			}
			g += y - p
			h += p * (1 - p)
		}
		if h < 1e-12 {
			break
		}
		step := g / h
		b += math.Max(-5, math.Min(5, step))
		if math.Abs(step) < 1e-10 {
			break
		}
	}
	return b, nil
}
