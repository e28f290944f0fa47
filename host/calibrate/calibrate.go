package calibrate

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/policies"
)

// Options configure a calibration. Target and Alpha are required.
type Options struct {
	// Base is the policy to start from, as JSON; nil means the default
	// preset. Its confidence must be signals.answerability.
	Base []byte
	// Target is the rate to bound, Alpha the bound, in (0,1).
	Target Target
	Alpha  float64
	// Confidence is 1-delta, the probability over the calibration sample
	// that the bound holds, in (0,1); 0 means 0.9.
	Confidence float64
	// CalibrationShare is the share of groups (per label stratum) that
	// chooses the threshold, the rest fitting the weights; 0 means 0.7.
	// The models have a handful of weights and start from the base's,
	// while the bound's slack shrinks with every calibration example.
	CalibrationShare float64
	// TestShare is the share of groups held out from both, only to
	// report rates on; 0 means none.
	TestShare float64
	// Seed chooses the split and the cross-validation folds.
	Seed uint64
	// L2 is the penalty on standardised weights; 0 means 1/n for n fit
	// examples (a standard normal prior on each weight).
	L2 float64
	// PerWeight is how many fit examples of the rarer label a model needs
	// per weight it fits (the events-per-variable rule); with fewer than
	// that for one weight it keeps the base's weights, and when no model
	// can be fitted the fit split joins the calibration split. 0 means 10.
	PerWeight int
	// NoLevels leaves the raw score levels (top_vector, top_bm25,
	// top_sparse) out of the fit.
	NoLevels bool
	// Defaults are the score conventions of examples whose request states
	// none, as the host that logged them applied them (serve's
	// --vector-metric is applied inside the gate, so a logged request does
	// not carry it).
	Defaults gate.Defaults
	// Name and Version of the written policy; "" means the base's name,
	// and the base's version + "-calibrated." + a hash of the calibrated
	// models (the CLI passes a UTC time instead, so that later
	// calibrations sort later for --min-version).
	Name, Version string
}

func (o Options) withDefaults() (Options, error) {
	if o.Target != Hallucination && o.Target != Error {
		return o, errors.New("calibrate: the target must be Hallucination or Error")
	}
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return o, errors.New("calibrate: the bound must be in (0,1), not " + num(o.Alpha))
	}
	if o.Confidence == 0 {
		o.Confidence = 0.9
	}
	if !(o.Confidence > 0 && o.Confidence < 1) {
		return o, errors.New("calibrate: the confidence must be in (0,1), not " + num(o.Confidence))
	}
	if o.CalibrationShare == 0 {
		o.CalibrationShare = 0.7
	}
	if !(o.TestShare >= 0 && o.CalibrationShare > 0 && o.TestShare+o.CalibrationShare < 1) {
		return o, errors.New("calibrate: the calibration and test shares must be > 0 and >= 0 and leave some examples to fit")
	}
	if !(o.L2 >= 0) || math.IsInf(o.L2, 0) {
		return o, errors.New("calibrate: L2 must be a finite number >= 0")
	}
	if o.PerWeight == 0 {
		o.PerWeight = 10
	}
	if o.PerWeight < 1 {
		return o, errors.New("calibrate: PerWeight must be >= 1")
	}
	if o.Base == nil {
		o.Base = policies.Default()
	}
	return o, nil
}

// Result is a calibrated policy and the report on it.
type Result struct {
	Policy []byte // policy JSON, valid in every host and signable
	Report *Report
}

// Calibrate fits the base policy's answerability models to labeled
// examples and chooses the threshold that, with probability Confidence
// over the calibration sample, keeps the target rate at or below Alpha on
// new data from the same source (doc.go). It returns an error wrapping
// ErrNoGuarantee, and no policy, when the examples cannot give that.
func Calibrate(exs []Example, o Options) (*Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	b, err := loadBase(o.Base, o.Defaults)
	if err != nil {
		return nil, err
	}
	if len(exs) == 0 {
		return nil, errors.New("calibrate: no examples")
	}
	ev, err := independent(exs)
	if err != nil {
		return nil, err
	}
	c := &run{o: o, b: b, exs: ev.exs, w: &written{},
		rep: &Report{Base: refOf(b.engine.Ref()), Target: o.Target.String(), Alpha: o.Alpha, Confidence: o.Confidence,
			Seed: o.Seed, CalibrationShare: o.CalibrationShare, TestShare: o.TestShare,
			Examples: Counts{Examples: len(exs), Duplicates: ev.duplicates, Groups: ev.groups}}}
	if c.rows, err = extractRows(b.engine, ev.exs, ev.keys, assignSplits(ev.exs, ev.keys, o.Seed, o.CalibrationShare, o.TestShare)); err != nil {
		return nil, err
	}
	if err := c.saturate(); err != nil {
		return nil, err
	}
	c.fit()
	pts, calIdx := c.calibrationPoints()
	ch, err := learnThenTest(pts, o.Target, o.Alpha, 1-o.Confidence)
	if err != nil {
		return nil, err
	}
	if err := useful(pts, ch, o.Target); err != nil {
		return nil, err
	}
	doc, final, err := c.write(ch)
	if err != nil {
		return nil, err
	}
	if err := c.measure(final, ch, pts, calIdx); err != nil {
		return nil, err
	}
	return &Result{Policy: doc, Report: c.rep}, nil
}

// run is one calibration's state, step by step.
type run struct {
	o            Options
	b            *base
	exs          []Example
	rows         []row
	w            *written
	text, scored ModelFit
	rep          *Report
}

// saturate sets bm25_saturation and sparse_saturation to the fit split's
// median best score, so that top_bm25 and top_sparse sit at 0.5 for a
// typical request of this retriever, and, for vector scores without a
// cosine level (a dot product, which no default could place), vector_center
// and vector_scale to the median and spread of the best vector similarity,
// so that top_vector reads this retriever's own scale; then it recomputes
// the features with them. A base model that already weighs a level keeps
// its own.
func (c *run) saturate() error {
	cfg := c.b.cfg
	c.w.bm25Sat, c.w.sparseSat = cfg.BM25Saturation, cfg.SparseSaturation
	c.w.vectorCenter, c.w.vectorScale = cfg.VectorCenter, cfg.VectorScale
	c.rep.Saturations = Saturations{BM25: cfg.BM25Saturation, Sparse: cfg.SparseSaturation, BaseBM25: cfg.BM25Saturation, BaseSparse: cfg.SparseSaturation,
		VectorCenter: cfg.VectorCenter, VectorScale: cfg.VectorScale}
	var bm, sp, vec []float64
	cosines := false // some vector score has a cosine level: top_vector reads it as it is
	for _, r := range c.rows {
		if r.split == fitSplit {
			bm, sp = append(bm, r.topBM25), append(sp, r.topSparse)
			if r.hasTopVector {
				vec = append(vec, r.topVector)
				cosines = cosines || r.f[featTopVector] > 0
			}
		}
	}
	if m := median(bm); m > 0 && !usesLevel(cfg, featTopBM25) {
		c.w.bm25Sat = m
	}
	if m := median(sp); m > 0 && !usesLevel(cfg, featTopSparse) {
		c.w.sparseSat = m
	}
	if center, scale := location(vec); scale > 0 && !cosines && !usesLevel(cfg, featTopVector) {
		c.w.vectorCenter, c.w.vectorScale = center, scale
	}
	if c.w.bm25Sat == cfg.BM25Saturation && c.w.sparseSat == cfg.SparseSaturation && c.w.vectorScale == cfg.VectorScale {
		return nil
	}
	c.w.name, c.w.version, c.w.text, c.w.scored = "probe", "0", cfg.Text, cfg.Scored
	doc, err := writePolicy(c.b, c.w)
	if err != nil {
		return err
	}
	probe, err := newEngine(doc, c.o.Defaults)
	if err != nil {
		return errors.New("calibrate: the base with the fitted saturations: " + err.Error())
	}
	return refreshFeatures(probe, c.exs, c.rows)
}

// fit fits each model on the fit rows it decides. When the fit split
// cannot afford one weight for any model (by its label counts alone, so
// the choice says nothing about how features relate to labels), its
// examples calibrate instead: the models stay the base's, fixed before
// seeing any data, and every example tightens the bound. A saturation no
// fitted model uses goes back to the base's: it moves no decision, and
// the written policy then differs from the base only where calibration
// changed something.
func (c *run) fit() {
	cfg := fitConfig{perWeight: c.o.PerWeight, l2: c.o.L2, levels: !c.o.NoLevels, seed: c.o.Seed}
	regime := func(scored bool) []row {
		var out []row
		for _, r := range c.rows {
			if r.split == fitSplit && r.fixed == 0 && r.scored == scored {
				out = append(out, r)
			}
		}
		return out
	}
	hasScored := c.b.cfg.HasScored
	c.text = fitModel("text", regime(false), &c.b.cfg.Text, cfg)
	c.scored = ModelFit{model: c.b.cfg.Scored}
	if hasScored {
		c.scored = fitModel("scored", regime(true), &c.b.cfg.Scored, cfg)
	}
	if !c.text.affords(candidate{base: true}, cfg) && (!hasScored || !c.scored.affords(candidate{base: true}, cfg)) {
		for i := range c.rows {
			if c.rows[i].split == fitSplit {
				c.rows[i].split = calibrationSplit
				c.rep.FitJoinedCalibration = true
			}
		}
	}
	c.rep.Models = append(c.rep.Models, c.text)
	if hasScored {
		c.rep.Models = append(c.rep.Models, c.scored)
	}
	used := func(i int) bool { return c.text.model.Used[i] || (hasScored && c.scored.model.Used[i]) }
	s := &c.rep.Saturations
	if used(featTopBM25) {
		s.BM25, s.BM25FromData = c.w.bm25Sat, true
	} else {
		c.w.bm25Sat = c.b.cfg.BM25Saturation
	}
	if used(featTopSparse) {
		s.Sparse, s.SparseFromData = c.w.sparseSat, true
	} else {
		c.w.sparseSat = c.b.cfg.SparseSaturation
	}
	if used(featTopVector) && c.w.vectorScale != c.b.cfg.VectorScale {
		s.VectorCenter, s.VectorScale, s.VectorFromData = c.w.vectorCenter, c.w.vectorScale, true
	} else {
		c.w.vectorCenter, c.w.vectorScale = c.b.cfg.VectorCenter, c.b.cfg.VectorScale
	}
}

// calibrationPoints are the calibration split's log-odds under the fitted
// models (the rows' indices beside them); ±Inf where the bands do not
// decide. Points of one group share a group number.
func (c *run) calibrationPoints() (pts []point, idx []int) {
	groups := map[string]int{}
	for i := range c.rows {
		r := &c.rows[i]
		if r.split != calibrationSplit {
			continue
		}
		g, ok := groups[r.group]
		if !ok {
			g = len(groups)
			groups[r.group] = g
		}
		p := point{label: r.label, group: g}
		switch {
		case r.fixed > 0:
			p.logit = math.Inf(1)
		case r.fixed < 0:
			p.logit = math.Inf(-1)
		case r.scored:
			p.logit = logitOf(&c.scored.model, &r.f)
		default:
			p.logit = logitOf(&c.text.model, &r.f)
		}
		pts = append(pts, p)
		idx = append(idx, i)
	}
	return pts, idx
}

// write moves both biases so that the threshold lands on the answering
// band's min (a decision's confidence then reads on the base's scale, and
// the bands keep their mins), writes the policy and loads it in the gate.
func (c *run) write(ch choice) ([]byte, *gate.Engine, error) {
	w, b := c.w, c.b
	shift := logit(b.answerMin) - ch.Threshold
	w.text, w.scored = c.text.model, c.scored.model
	w.text.Bias = round6(w.text.Bias + shift)
	w.scored.Bias = round6(w.scored.Bias + shift)
	if math.Abs(w.text.Bias) > 100 || math.Abs(w.scored.Bias) > 100 {
		return nil, nil, fmt.Errorf("%w: the threshold puts a model's bias beyond 100 (log-odds %.1f)", ErrNoGuarantee, ch.Threshold)
	}
	w.name, w.version = c.o.Name, c.o.Version
	if w.name == "" {
		w.name = b.policy.Name
	}
	if w.version == "" {
		w.version = b.policy.Version + "-calibrated." + modelHash(w)
	}
	w.description = description(b, c.o, ch)
	doc, err := writePolicy(b, w)
	if err != nil {
		return nil, nil, err
	}
	final, err := newEngine(doc, c.o.Defaults)
	if err != nil {
		return nil, nil, errors.New("calibrate: the written policy does not validate (a bug): " + err.Error())
	}
	c.rep.Policy = refOf(final.Ref())
	return doc, final, nil
}

// measure decides every example with the written policy and with the
// base, through the gate, for the report's rates and held-out AUROC, and
// checks that the policy answers exactly the calibration examples the
// test counted as answered.
func (c *run) measure(final *gate.Engine, ch choice, pts []point, calIdx []int) error {
	rows, exs := c.rows, c.exs
	conf := make([]float64, len(rows))
	baseConf := make([]float64, len(rows))
	answered := make([]bool, len(rows))
	splitRates := [3]Rates{{Split: "fit"}, {Split: "calibration"}, {Split: "test"}}
	for i := range rows {
		d, err := final.Decide(exs[i].Request)
		if err != nil {
			return fmt.Errorf("%s: %w", exs[i].where(i), err)
		}
		bd, err := c.b.engine.Decide(exs[i].Request)
		if err != nil {
			return fmt.Errorf("%s: %w", exs[i].where(i), err)
		}
		conf[i], baseConf[i], answered[i] = d.Confidence, bd.Confidence, answers(d.Action)
		splitRates[rows[i].split].add(rows[i].label, d.Action)
	}
	for j, i := range calIdx {
		if got, want := answered[i], pts[j].answered(ch.Threshold); got != want {
			return fmt.Errorf("calibrate: the written policy %s %s, the threshold test counted it the other way (a bug)",
				map[bool]string{true: "answers", false: "withholds"}[got], exs[i].where(i))
		}
	}
	c.rep.Examples.count(rows)
	for _, s := range splitRates {
		if s.Examples > 0 {
			c.rep.Splits = append(c.rep.Splits, s)
		}
	}
	// Held-out AUROC: every example the weights were not fitted on.
	var pc, bc []float64
	var lb []bool
	for i, r := range rows {
		if r.split != fitSplit {
			pc, bc, lb = append(pc, conf[i]), append(bc, baseConf[i]), append(lb, r.label)
		}
	}
	c.rep.AUROC = compareAUROC(pc, bc, lb)
	c.rep.Bound = bound(c.o, c.b, ch)
	return nil
}

// useful refuses a threshold that passes only by making the gate useless.
func useful(pts []point, ch choice, t Target) error {
	var other, right int // band-decided examples of the other label; on the right side
	for _, p := range pts {
		if math.IsInf(p.logit, 0) || p.label == t.label() {
			continue
		}
		other++
		if p.answered(ch.Threshold) == p.label {
			right++
		}
	}
	if other > 0 && right > 0 {
		return nil
	}
	if t == Hallucination {
		return fmt.Errorf("%w: keeping the hallucination rate at most the bound on these %d independent calibration examples labeled 0 needs a threshold that answers none of the %d labeled 1 (more examples, a looser bound, or a lower confidence)",
			ErrNoGuarantee, ch.N, other)
	}
	return fmt.Errorf("%w: keeping the error rate at most the bound on these %d independent calibration examples labeled 1 needs a threshold that withholds none of the %d labeled 0: the gate would answer everything (more examples, a looser bound, or a lower confidence)",
		ErrNoGuarantee, ch.N, other)
}

func usesLevel(c *gate.AnswerabilityConfig, i int) bool {
	return c.Text.Used[i] || (c.HasScored && c.Scored.Used[i])
}

// modelHash names a calibration by what it wrote: 8 hex digits of the
// models and saturations.
func modelHash(w *written) string {
	h := sha256.New()
	for _, m := range []*gate.AnswerabilityModel{&w.text, &w.scored} {
		h.Write([]byte(num(m.Bias)))
		for i, u := range m.Used {
			if u {
				h.Write([]byte(gate.FeatureNames[i] + num(m.Weights[i])))
			}
		}
	}
	h.Write([]byte(num(w.bm25Sat) + num(w.sparseSat)))
	return hex.EncodeToString(h.Sum(nil))[:8]
}

func description(b *base, o Options, ch choice) string {
	s := "Calibrated by ctxgate calibrate from " + b.policy.Name + " " + b.policy.Version +
		" (sha256 " + b.engine.Ref().SHA256[:12] + "): the " + o.Target.String() + " rate is at most " + num(o.Alpha) +
		" with confidence " + num(o.Confidence) + " on new data from the same source (Learn-then-Test, exact binomial test on " +
		strconv.Itoa(ch.N) + " independent calibration examples labeled " + strconv.Itoa(b2i(o.Target.label())) + ")."
	if b.policy.Description != "" {
		s += " Base: " + b.policy.Description
	}
	return s
}
