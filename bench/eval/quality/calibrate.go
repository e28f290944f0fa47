package quality

import (
	"errors"
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/bench/eval"
	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/host/calibrate"
	"github.com/ctxgate/ctxgate/internal/keyhash"
	"github.com/ctxgate/ctxgate/policies"
)

// Calibration to a user's data, as `ctxgate calibrate` runs it: a user's
// labeled examples are taken to be half of one answer-removed family (its
// queries at k = 5, 10 and 20, both labels, grouped by query so that one
// question never counts twice), the other half is new data from the same
// source. CalibrateSplits halvings by seed; each calibrates the default with
// a bound on the hallucination rate, then measures the calibrated policy and
// the default on the other half.
const (
	CalibrateSplits = 5
	CalibrateAlpha  = 0.25 // the hallucination bound asked for
	// CalibrateConfidence is the probability over the calibration sample
	// that the bound holds.
	CalibrateConfidence = 0.9
)

// CalibrateSplit is one halving.
type CalibrateSplit struct {
	Seed         uint64
	User, New    int // examples on each side
	Default, Cal float64
	// Choice is what calibration did to the scored model (fitted form or
	// why it kept the base's weights); "" when it refused.
	Choice string
	// NewRate is the hallucination rate of the calibrated policy on the
	// other half (NewWrong of NewNeg unanswerable examples answered),
	// against the stated bound.
	NewRate          float64
	NewWrong, NewNeg int
	// Refused is calibrate's error when the examples could give no bound.
	Refused string
}

// CalibrateResult is the experiment on one family.
type CalibrateResult struct {
	Family string
	Splits []CalibrateSplit
}

// Wins counts the splits where the calibrated policy's AUROC on new data is
// at least the default's (a refusal counts as a loss).
func (c *CalibrateResult) Wins() int {
	n := 0
	for _, s := range c.Splits {
		if s.Refused == "" && s.Cal >= s.Default {
			n++
		}
	}
	return n
}

// BoundHeld counts the splits whose new data is consistent with the stated
// bound: the bound is on the true rate, and some 60 unanswerable examples
// from some 20 questions measure it with a standard error near 0.06, so a
// split counts as broken only when its new-data count of answered
// unanswerable examples would be unlikely (one-sided exact binomial test
// at 5%) were the true rate at the bound. Counting examples, not
// questions, makes the test stricter than the examples' independence
// warrants.
func (c *CalibrateResult) BoundHeld() int {
	n := 0
	for _, s := range c.Splits {
		if s.Refused == "" && s.BoundConsistent() {
			n++
		}
	}
	return n
}

// BoundConsistent tells whether s's new-data rate is consistent with the
// bound (BoundHeld).
func (s *CalibrateSplit) BoundConsistent() bool {
	if s.NewWrong == 0 {
		return true
	}
	// P(X >= NewWrong) for X ~ Binomial(NewNeg, alpha).
	return 1-calibrate.BinomialCDF(s.NewWrong-1, s.NewNeg, CalibrateAlpha) >= 0.05
}

// runCalibrate runs the experiment on every answer-removed family.
func (r *Report) runCalibrate() error {
	def, err := gate.NewEngine(policies.Default())
	if err != nil {
		return err
	}
	for _, p := range eval.RemovedPairs {
		var items []eval.Item
		for _, k := range RemovedK {
			g := r.group(p.At(k))
			items = append(append(items, g.Tune...), g.Held...)
		}
		res := CalibrateResult{Family: p.Title()}
		for seed := uint64(1); seed <= CalibrateSplits; seed++ {
			s, err := calibrateSplit(def, items, seed)
			if err != nil {
				return errors.New(p.Title() + ": " + err.Error())
			}
			res.Splits = append(res.Splits, s)
		}
		r.Calibrate = append(r.Calibrate, res)
	}
	return nil
}

func calibrateSplit(def *gate.Engine, items []eval.Item, seed uint64) (CalibrateSplit, error) {
	s := CalibrateSplit{Seed: seed}
	var user []calibrate.Example
	var fresh []eval.Item
	for _, it := range items {
		if keyhash.Sum64(strconv.FormatUint(seed, 10)+":"+it.Set+":"+it.ID)&1 == 0 {
			user = append(user, calibrate.Example{Request: ToGate(it.Req), Label: it.Answerable, Group: it.Set + ":" + it.ID})
		} else {
			fresh = append(fresh, it)
		}
	}
	s.User, s.New = len(user), len(fresh)
	res, err := calibrate.Calibrate(user, calibrate.Options{Target: calibrate.Hallucination, Alpha: CalibrateAlpha,
		Confidence: CalibrateConfidence, Seed: seed})
	defOut, derr := Run(def, fresh)
	if derr != nil {
		return s, derr
	}
	s.Default = Measure(fresh, defOut).AUROC
	if err != nil {
		if !errors.Is(err, calibrate.ErrNoGuarantee) {
			return s, err
		}
		s.Refused = err.Error()
		return s, nil
	}
	for _, m := range res.Report.Models {
		if m.Model == "scored" {
			s.Choice = m.Note
			if m.Form != "" {
				s.Choice = m.Form
			}
		}
	}
	e, err := gate.NewEngine(res.Policy)
	if err != nil {
		return s, err
	}
	out, err := Run(e, fresh)
	if err != nil {
		return s, err
	}
	m := Measure(fresh, out)
	s.Cal, s.NewRate = m.AUROC, m.Op.HallucinationRate()
	s.NewWrong, s.NewNeg = m.Op.FP, m.Op.FP+m.Op.TN
	return s, nil
}

func (r *Report) calibrateSection(m *mdWriter) {
	w := m.w
	if len(r.Calibrate) == 0 {
		return
	}
	w("## Calibration to a user's data")
	w()
	w("`ctxgate calibrate` (docs/calibration.md) fitted to half of one answer-removed family, as a user would fit it to their own labeled questions: the family's queries at k = 5, 10 and 20, both labels, grouped by query; the other half is new data from the same retriever. ",
		itoa(CalibrateSplits), " halvings by seed, each asking for hallucination <= ", f(CalibrateAlpha), " with probability ", f(CalibrateConfidence),
		". AUROC on the new half, the default's and the calibrated policy's; what calibration chose for the scored model (its nested validation: grouped cross-validation on the fit split chooses the form, the calibration split sets the threshold); the calibrated policy's hallucination rate on the new half, and whether that is consistent with the bound (one-sided exact binomial test at 5%: the bound is on the true rate, which some 60 examples from some 20 questions measure only to about ±0.06).")
	w()
	w("| family | split | examples (user / new) | default AUROC | calibrated AUROC | chosen | hallucination on new data | consistent with the bound |")
	w("|---|---|---|---|---|---|---|---|")
	for _, c := range r.Calibrate {
		for _, s := range c.Splits {
			if s.Refused != "" {
				w("| ", c.Family, " | ", itoa(int(s.Seed)), " | ", itoa(s.User), " / ", itoa(s.New), " | ", f(s.Default), " | refused | ", strings.ReplaceAll(s.Refused, "|", "/"), " | | |")
				continue
			}
			w("| ", c.Family, " | ", itoa(int(s.Seed)), " | ", itoa(s.User), " / ", itoa(s.New), " | ", f(s.Default), " | ", f(s.Cal), " | ", strings.ReplaceAll(s.Choice, "|", "/"), " | ", pct(s.NewRate),
				" (", itoa(s.NewWrong), " of ", itoa(s.NewNeg), ") | ", yesNo(s.BoundConsistent()), " |")
		}
	}
	w()
}
