package calibrate

import (
	"math"
	"math/rand"
	"testing"
)

// bruteDeLong computes the AUROC and its DeLong variance pair by pair,
// straight from the definitions.
func bruteDeLong(s []float64, l []bool) (auc, variance float64) {
	var ps, ns []float64
	for i, v := range s {
		if l[i] {
			ps = append(ps, v)
		} else {
			ns = append(ns, v)
		}
	}
	psi := func(x, y float64) float64 {
		switch {
		case x > y:
			return 1
		case x == y:
			return 0.5
		}
		return 0
	}
	v10 := make([]float64, len(ps))
	v01 := make([]float64, len(ns))
	for i, x := range ps {
		for j, y := range ns {
			v10[i] += psi(x, y) / float64(len(ns))
			v01[j] += psi(x, y) / float64(len(ps))
			auc += psi(x, y)
		}
	}
	auc /= float64(len(ps) * len(ns))
	return auc, covar(v10, v10)/float64(len(ps)) + covar(v01, v01)/float64(len(ns))
}

func TestDeLongMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for trial := 0; trial < 50; trial++ {
		n := 5 + r.Intn(60)
		s := make([]float64, n)
		l := make([]bool, n)
		for i := range s {
			l[i] = i%3 != 0
			s[i] = float64(r.Intn(8)) // many ties
			if l[i] {
				s[i] += float64(r.Intn(3))
			}
		}
		d := placements(s, l)
		auc, v := bruteDeLong(s, l)
		if math.Abs(d.auc()-auc) > 1e-12 || math.Abs(d.cov(d)-v) > 1e-12 {
			t.Fatalf("placements give AUROC %v variance %v; by definition %v %v", d.auc(), d.cov(d), auc, v)
		}
	}
}

func TestCompareAUROC(t *testing.T) {
	labels := []bool{true, true, true, false, false, false}
	perfect := []float64{0.9, 0.8, 0.7, 0.3, 0.2, 0.1}
	flat := []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5}
	c := compareAUROC(perfect, flat, labels)
	if c.Policy.Value != 1 || c.Base.Value != 0.5 || c.Diff.Value != 0.5 || c.Positive != 3 || c.Negative != 3 {
		t.Errorf("got %+v", c)
	}
	// The same scores twice: no difference, and no doubt about it.
	c = compareAUROC(perfect, perfect, labels)
	if c.Diff.Value != 0 || c.Diff.Lo != 0 || c.Diff.Hi != 0 {
		t.Errorf("identical scores: difference %+v", c.Diff)
	}
	// One label only: nothing to compare.
	c = compareAUROC([]float64{1, 2}, []float64{1, 2}, []bool{true, true})
	if !math.IsNaN(c.Policy.Value) {
		t.Errorf("one label: %+v", c.Policy)
	}
}
