package calibrate

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/policies"
)

// Calibration recovers the weights the labels were drawn with: the
// default text model scaled by 1.5, plus 6 × top_vector, minus 5. On
// 6000 fit examples the estimates vary by some 7% between samples (five
// seeds gave scales 1.32 to 1.57, top_vector 5.9 to 6.3), hence the
// tolerances.
func TestCalibrateRecoversWeights(t *testing.T) {
	w := newWorld(1, 1.5, 6, -5)
	exs := w.examples(8000)
	res, err := Calibrate(exs, Options{Target: Hallucination, Alpha: 0.1, CalibrationShare: 0.25, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var text *ModelFit
	for i := range res.Report.Models {
		if res.Report.Models[i].Model == "text" {
			text = &res.Report.Models[i]
		}
	}
	if text == nil || !text.Fitted {
		t.Fatalf("the text model was not fitted: %+v", res.Report.Models)
	}
	def := &w.def.Policy().Answerability.Text
	want := map[string]struct{ w, tol float64 }{
		"answer_coverage":   {1.5 * def.Weights[featureIndex("answer_coverage")], 0.2},
		"doc_concentration": {1.5 * def.Weights[featureIndex("doc_concentration")], 0.2},
		"top_vector":        {6, 0.15},
	}
	t.Logf("form %s, weights %v, bias %.3f (want %v, bias %.3f)", text.Form, text.Weights, text.Bias, want, 1.5*def.Bias-5)
	if text.Form != "base + top_vector" {
		t.Errorf("form %q, want base + top_vector (the truth's form)", text.Form)
	}
	for n, v := range want {
		if got := text.Weights[n]; math.Abs(got-v.w) > v.tol*math.Abs(v.w) {
			t.Errorf("weight %s = %.3f, want %.3f within %.0f%%", n, got, v.w, 100*v.tol)
		}
	}
	if math.Abs(text.Bias-(1.5*def.Bias-5)) > 0.6 {
		t.Errorf("bias %.3f, want %.3f", text.Bias, 1.5*def.Bias-5)
	}
	// The fit ranks better than the base, which ignores top_vector.
	if a := res.Report.AUROC; !(a.Diff.Value > 0 && a.Diff.Lo > 0) {
		t.Errorf("held-out AUROC %+v vs base %+v: want clearly better", a.Policy, a.Base)
	}
}

// The bound holds across many calibration samples from one source: the
// written policy's rate, measured through the gate on a large fresh
// sample, exceeds the bound in at most about 1 - confidence of them.
func TestCalibrateBoundHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("many calibrations")
	}
	w := newWorld(2, 1.2, 4, -3.2)
	pool := w.examples(4000)
	for _, c := range []struct {
		target Target
		alpha  float64
	}{{Hallucination, 0.15}, {Error, 0.15}} {
		const trials, conf = 60, 0.9
		violations, refused := 0, 0
		sum := 0.0
		for trial := 0; trial < trials; trial++ {
			exs := w.examples(200)
			res, err := Calibrate(exs, Options{Target: c.target, Alpha: c.alpha, Confidence: conf, Seed: uint64(trial)})
			if errors.Is(err, ErrNoGuarantee) {
				refused++
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			e, err := gate.NewEngine(res.Policy)
			if err != nil {
				t.Fatal(err)
			}
			wrong, n := 0, 0
			for _, ex := range pool {
				if ex.Label != c.target.label() {
					continue
				}
				d, err := e.Decide(ex.Request)
				if err != nil {
					t.Fatal(err)
				}
				n++
				if answers(d.Action) != ex.Label {
					wrong++
				}
			}
			rate := float64(wrong) / float64(n)
			sum += rate
			if rate > c.alpha {
				violations++
			}
		}
		t.Logf("%s <= %g at %g: above the bound on the fresh sample in %d of %d calibrations, mean rate %.3f, refused %d",
			c.target, c.alpha, conf, violations, trials-refused, sum/float64(trials-refused), refused)
		if refused > trials/10 {
			t.Errorf("%s: refused %d of %d calibrations of 200 examples", c.target, refused, trials)
		}
		// At most 10% expected; 13 of 60 would happen by chance with
		// probability under 1% if the true share were 10%.
		if violations > 12 {
			t.Errorf("%s: the bound failed in %d of %d calibrations", c.target, violations, trials-refused)
		}
	}
}

// Too few examples, or a bound the data cannot meet, give ErrNoGuarantee
// and no policy.
func TestCalibrateRefuses(t *testing.T) {
	w := newWorld(3, 1, 4, -2.8)
	for _, c := range []struct {
		name string
		n    int
		o    Options
		want string
	}{
		{"12 examples", 12, Options{Target: Hallucination, Alpha: 0.2}, "needs at least 11"},
		{"a bound of 0.001", 400, Options{Target: Hallucination, Alpha: 0.001}, "needs at least"},
		{"an error bound of 0.01", 400, Options{Target: Error, Alpha: 0.01}, "needs at least"},
	} {
		res, err := Calibrate(w.examples(c.n), c.o)
		if !errors.Is(err, ErrNoGuarantee) || !strings.Contains(err.Error(), c.want) || res != nil {
			t.Errorf("%s: got %v, want ErrNoGuarantee saying %q and no result", c.name, err, c.want)
		}
	}
}

func TestCalibrateRejectsOptions(t *testing.T) {
	w := newWorld(4, 1, 4, -2.8)
	exs := w.examples(50)
	rag, _ := policies.Get("rag-confidence")
	for _, c := range []struct {
		name string
		o    Options
		want string
	}{
		{"no target", Options{Alpha: 0.1}, "target"},
		{"bound 0", Options{Target: Error}, "bound must be in (0,1)"},
		{"bound 1", Options{Target: Error, Alpha: 1}, "bound must be in (0,1)"},
		{"confidence 1", Options{Target: Error, Alpha: 0.1, Confidence: 1}, "confidence must be in (0,1)"},
		{"shares leave nothing to fit", Options{Target: Error, Alpha: 0.1, CalibrationShare: 0.8, TestShare: 0.2}, "leave some examples to fit"},
		{"a base without answerability", Options{Target: Error, Alpha: 0.1, Base: rag}, "signals.answerability"},
		{"a base that is not a policy", Options{Target: Error, Alpha: 0.1, Base: []byte(`{"name": "x"}`)}, "base policy: "},
	} {
		if _, err := Calibrate(exs, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %q", c.name, err, c.want)
		}
	}
	if _, err := Calibrate([]Example{{Label: true}}, Options{Target: Error, Alpha: 0.1}); err == nil || !strings.Contains(err.Error(), "example 1: request is missing") {
		t.Errorf("a nil request: got %v", err)
	}
}

// The written policy is the base with only the answerability models,
// name, version and description changed; it validates and decides, and
// the same examples and options always write the same bytes.
func TestCalibratePolicy(t *testing.T) {
	w := newWorld(5, 1.5, 6, -5)
	exs := w.examples(600)
	o := Options{Target: Hallucination, Alpha: 0.1}
	a, err := Calibrate(exs, o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Calibrate(exs, o)
	if err != nil {
		t.Fatal(err)
	}
	if string(a.Policy) != string(b.Policy) {
		t.Error("the same calibration wrote different policies")
	}
	p, err := gate.DecodePolicy(a.Policy)
	if err != nil {
		t.Fatal(err)
	}
	def, _ := gate.DecodePolicy(policies.Default())
	if p.Name != "default" || !strings.HasPrefix(p.Version, def.Version+"-calibrated.") || !strings.HasPrefix(p.Description, "Calibrated by ctxgate calibrate from default "+def.Version) {
		t.Errorf("name %q version %q description %.60q...", p.Name, p.Version, p.Description)
	}
	if len(p.Bands) != len(def.Bands) || p.Bands[0] != def.Bands[0] || p.Bands[1] != def.Bands[1] || p.Confidence.Signal != def.Confidence.Signal {
		t.Errorf("bands or confidence changed: %+v", p.Bands)
	}
	if *p.AnswerCoverage != *def.AnswerCoverage || *p.ChunkRelevance != *def.ChunkRelevance {
		t.Error("a signal other than answerability changed")
	}
	if p.Answerability.Text == def.Answerability.Text {
		t.Error("the text model did not change")
	}
	// A test split is held out from both and reported on.
	held, err := Calibrate(exs, Options{Target: Hallucination, Alpha: 0.1, CalibrationShare: 0.5, TestShare: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	n := 0
	for _, r := range held.Report.Splits {
		names = append(names, r.Split)
		n += r.Examples
	}
	if strings.Join(names, " ") != "fit calibration test" || n != len(exs) || held.Report.Splits[2].Examples < 100 {
		t.Errorf("splits %v over %d examples: %+v", names, n, held.Report.Splits)
	}
	if a := held.Report.AUROC; a.Positive+a.Negative != held.Report.Splits[1].Examples+held.Report.Splits[2].Examples {
		t.Errorf("held-out AUROC over %d examples, want the calibration and test splits'", a.Positive+a.Negative)
	}
	named, err := Calibrate(exs, Options{Target: Hallucination, Alpha: 0.1, Name: "support", Version: "7"})
	if err != nil {
		t.Fatal(err)
	}
	if r := named.Report.Policy; r.Name != "support" || r.Version != "7" {
		t.Errorf("Name and Version options gave %+v", r)
	}
}
