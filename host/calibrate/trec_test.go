package calibrate_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/bench/eval"
	"github.com/ctxgate/ctxgate/bench/eval/quality"
	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/host/calibrate"
	"github.com/ctxgate/ctxgate/policies"
)

// trecSet is one answer-removed set as calibration examples: the top 10
// of the hybrid retrieval, grouped by query id (a query's answerable and
// answer-removed requests always share a split).
type trecSet struct {
	name     string
	examples []calibrate.Example
	query    []string  // query id per example
	defConf  []float64 // the default policy's confidence per example
}

func loadTREC(t testing.TB, set string) *trecSet {
	t.Helper()
	dir, err := eval.DataDirFrom(".")
	if errors.Is(err, eval.ErrNoData) {
		t.Skip("skipping: the labeled data (../shared/data or $CTXGATE_DATA) is absent")
	}
	if err != nil {
		t.Fatal(err)
	}
	d, err := eval.LoadTREC(dir, set)
	if err != nil {
		t.Fatal(err)
	}
	def, err := gate.NewEngine(policies.Default())
	if err != nil {
		t.Fatal(err)
	}
	s := &trecSet{name: set}
	for _, it := range d.AnswerRemovedItems(10) {
		req := quality.ToGate(it.Req)
		dec, err := def.Decide(req)
		if err != nil {
			t.Fatal(err)
		}
		s.examples = append(s.examples, calibrate.Example{Request: req, Label: it.Answerable, Group: it.ID})
		s.query = append(s.query, it.ID)
		s.defConf = append(s.defConf, dec.Confidence)
	}
	return s
}

// halves splits a set by query id: tune when the seeded hash's low bit is 0.
func (s *trecSet) halves(seed int) (tune []calibrate.Example, held []int) {
	for i, ex := range s.examples {
		if eval.IsTune(s.name+"/split"+strconv.Itoa(seed), s.query[i]) {
			tune = append(tune, ex)
		} else {
			held = append(held, i)
		}
	}
	return tune, held
}

// heldOut is what a policy does on the held-out examples.
type heldOut struct {
	hallucination, errRate float64
	auroc, defAUROC        float64
}

func (s *trecSet) evaluate(t testing.TB, policy []byte, held []int) heldOut {
	e, err := gate.NewEngine(policy)
	if err != nil {
		t.Fatal(err)
	}
	var pr eval.PR
	var conf, def []float64
	var lab []bool
	for _, i := range held {
		ex := s.examples[i]
		d, err := e.Decide(ex.Request)
		if err != nil {
			t.Fatal(err)
		}
		pr.Add(quality.Answered(d.Action), ex.Label)
		conf, def, lab = append(conf, d.Confidence), append(def, s.defConf[i]), append(lab, ex.Label)
	}
	return heldOut{pr.HallucinationRate(), pr.ErrorRate(), eval.AUROC(conf, lab), eval.AUROC(def, lab)}
}

// The done-when, on each answer-removed set at k = 10: over 100
// random tune/held-out splits by query id, calibrate on the tune half
// (confidence 0.9, every other option its default) and measure the
// written policy on the held-out half through the gate.
//
// What the data affords: a tune half holds some 21 (DL19) or 26 (DL21)
// queries, each with one answerable and one answer-removed request. A
// bound of 0.2 on hallucination at 0.9 needs at least 11 examples labeled
// 0 in the calibration split, and one of 0.1 on error at least 22 labeled
// 1: the fit split cannot afford a weight (10 per label) and joins the
// calibration split, so the default's weights are kept and only the
// threshold moves. Where a tune half has fewer than 22 answerable queries
// no error bound of 0.1 exists, and calibrate refuses.
func TestTRECBoundOverSplits(t *testing.T) {
	for _, set := range []string{"dl19", "dl21"} {
		s := loadTREC(t, set)
		for _, c := range []struct {
			target calibrate.Target
			alpha  float64
			// minMet is the least number of the 100 splits whose policy
			// keeps the held-out rate within the bound (refusals count
			// as misses); measured 88 and 93 for hallucination, 35 and 74
			// for error.
			minMet int
		}{
			{calibrate.Hallucination, 0.2, 85},
			{calibrate.Error, 0.1, 30},
		} {
			met, refused, produced, notWorse := 0, 0, 0, 0
			var sumRate, sumAUROC, sumDefault float64
			for seed := 0; seed < 100; seed++ {
				tune, held := s.halves(seed)
				res, err := calibrate.Calibrate(tune, calibrate.Options{Target: c.target, Alpha: c.alpha, Confidence: 0.9, Seed: uint64(seed)})
				if errors.Is(err, calibrate.ErrNoGuarantee) {
					refused++
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				produced++
				h := s.evaluate(t, res.Policy, held)
				rate := h.hallucination
				if c.target == calibrate.Error {
					rate = h.errRate
				}
				if rate <= c.alpha {
					met++
				}
				if h.auroc >= h.defAUROC {
					notWorse++
				}
				sumRate += rate
				sumAUROC += h.auroc
				sumDefault += h.defAUROC
			}
			n := float64(max(produced, 1))
			t.Logf("%s, %s <= %g at 0.9: held-out rate within the bound in %d of 100 splits (%d of %d policies written; %d refused), mean held-out rate %.3f; held-out AUROC >= the default's in %d of %d (mean %.3f vs %.3f)",
				set, c.target, c.alpha, met, met, produced, refused, sumRate/n, notWorse, produced, sumAUROC/n, sumDefault/n)
			if met < c.minMet {
				t.Errorf("%s, %s <= %g: within the bound in %d of 100 splits, want >= %d", set, c.target, c.alpha, met, c.minMet)
			}
			if notWorse < produced {
				t.Errorf("%s, %s: held-out AUROC below the default's in %d of %d splits", set, c.target, produced-notWorse, produced)
			}
		}
	}
}

// Calibrating the default for ada-002 (DL19: BM25 + cosines) and for
// SPLADE (DL21: BM25 + sparse scores), each on the project's tune half
// (eval.IsTune), measured on its held-out half.
func TestTRECPerRetriever(t *testing.T) {
	for _, set := range []string{"dl19", "dl21"} {
		s := loadTREC(t, set)
		var tune []calibrate.Example
		var held []int
		for i, ex := range s.examples {
			if eval.IsTune(set, s.query[i]) {
				tune = append(tune, ex)
			} else {
				held = append(held, i)
			}
		}
		res, err := calibrate.Calibrate(tune, calibrate.Options{Target: calibrate.Hallucination, Alpha: 0.2, Confidence: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		h := s.evaluate(t, res.Policy, held)
		var notes []string
		for _, m := range res.Report.Models {
			notes = append(notes, m.Model+": "+m.Note)
		}
		t.Logf("%s: %d tune examples; held-out AUROC %.3f, default %.3f; hallucination %.3f, error %.3f; %s",
			set, len(tune), h.auroc, h.defAUROC, h.hallucination, h.errRate, strings.Join(notes, "; "))
		if h.auroc < h.defAUROC {
			t.Errorf("%s: held-out AUROC %.3f below the default's %.3f", set, h.auroc, h.defAUROC)
		}
		if h.hallucination > 0.2 {
			t.Errorf("%s: held-out hallucination %.3f above the bound 0.2", set, h.hallucination)
		}
	}
}

// The 103 DL21 examples cannot support a hallucination bound of 0.05 at
// 0.9, and calibrate says so. Ten copies of them, in their groups or each
// copy under new group names, say exactly the same: repeats are not
// evidence.
func TestTRECRepeatsBuyNoBound(t *testing.T) {
	s := loadTREC(t, "dl21")
	o := calibrate.Options{Target: calibrate.Hallucination, Alpha: 0.05, Confidence: 0.9}
	_, want := calibrate.Calibrate(s.examples, o)
	if !errors.Is(want, calibrate.ErrNoGuarantee) {
		t.Fatalf("one copy: %v, want no guarantee", want)
	}
	var same, renamed []calibrate.Example
	for c := 0; c < 10; c++ {
		for _, ex := range s.examples {
			same = append(same, ex)
			ex.Group += "/copy" + strconv.Itoa(c)
			renamed = append(renamed, ex)
		}
	}
	for name, exs := range map[string][]calibrate.Example{"in their groups": same, "under new group names": renamed} {
		if _, err := calibrate.Calibrate(exs, o); err == nil || err.Error() != want.Error() {
			t.Errorf("ten copies %s: %v, want %v", name, err, want)
		}
	}
}
