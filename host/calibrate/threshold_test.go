package calibrate

import (
	"errors"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// The guarantee, checked where the true rates are known exactly: logits of
// examples labeled 0 are N(0,1), of those labeled 1 N(2,1), so the true
// hallucination rate at threshold t is P(N(0,1) >= t) and the true error
// rate P(N(2,1) < t). Over many calibration samples, the chosen
// threshold's true rate may exceed alpha in at most a delta share of
// them (plus sampling slack), and should not be absurdly below it.
func TestLearnThenTestGuarantee(t *testing.T) {
	upper := func(x float64) float64 { return 0.5 * math.Erfc(x/math.Sqrt2) } // P(N(0,1) >= x)
	for _, c := range []struct {
		target       Target
		alpha, delta float64
		n            int // examples of each label
	}{
		{Hallucination, 0.1, 0.1, 60},
		{Hallucination, 0.2, 0.1, 25},
		{Hallucination, 0.05, 0.2, 200},
		{Error, 0.1, 0.1, 60},
		{Error, 0.2, 0.05, 40},
	} {
		r := rand.New(rand.NewSource(int64(c.n)))
		const trials = 2000
		violations, refused := 0, 0
		sum := 0.0
		for trial := 0; trial < trials; trial++ {
			pts := make([]point, 0, 2*c.n)
			for i := 0; i < c.n; i++ {
				pts = append(pts, point{r.NormFloat64(), false, 2 * i}, point{2 + r.NormFloat64(), true, 2*i + 1})
			}
			ch, err := learnThenTest(pts, c.target, c.alpha, c.delta)
			if err != nil {
				refused++
				continue
			}
			rate := upper(ch.Threshold) // hallucination
			if c.target == Error {
				rate = 1 - upper(ch.Threshold-2)
			}
			sum += rate
			if rate > c.alpha {
				violations++
			}
		}
		share := float64(violations) / trials
		slack := 3 * math.Sqrt(c.delta*(1-c.delta)/trials)
		mean := sum / float64(trials-refused)
		t.Logf("%s <= %g at 1-delta %g, n %d: true rate above the bound in %.3f of samples (delta %g), mean true rate %.3f, refused %d",
			c.target, c.alpha, 1-c.delta, c.n, share, c.delta, mean, refused)
		if share > c.delta+slack {
			t.Errorf("%s <= %g: the bound failed in %.3f of samples, more than delta %g", c.target, c.alpha, share, c.delta)
		}
		if mean < c.alpha/3 {
			t.Errorf("%s <= %g: mean true rate %.3f: far more conservative than the test should be", c.target, c.alpha, mean)
		}
	}
}

func TestLearnThenTestRefuses(t *testing.T) {
	pts := func(neg, pos []float64) []point {
		var out []point
		for _, x := range neg {
			out = append(out, point{x, false, len(out)})
		}
		for _, x := range pos {
			out = append(out, point{x, true, len(out)})
		}
		return out
	}
	ten := []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}
	for _, c := range []struct {
		name   string
		pts    []point
		target Target
		want   string // "" for a threshold
	}{
		{"10 labeled 0 cannot give 0.2 at 0.9 (11 needed)", pts(ten, []float64{5}), Hallucination, "needs at least 11"},
		{"11 labeled 0 can", pts(append(ten, 1), []float64{5}), Hallucination, ""},
		{"no example labeled 1 for an error bound", pts(ten, nil), Error, "no example labeled 1"},
		{"no chunks anywhere", pts([]float64{math.Inf(-1)}, []float64{math.Inf(-1)}), Hallucination, "no calibration example has chunks"},
		{"answered without the bands", pts(append(ten, math.Inf(1), math.Inf(1), 1, 1.1, 1.2), []float64{5}), Hallucination, "decided without the bands"},
	} {
		ch, err := learnThenTest(c.pts, c.target, 0.2, 0.1)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !errors.Is(err, ErrNoGuarantee) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v (threshold %v), want ErrNoGuarantee saying %q", c.name, err, ch.Threshold, c.want)
		}
	}
}

// With 11 examples labeled 0 at 0.2 and 0.9 none may be answered: the
// threshold lands above the highest of them, half way to the next logit.
func TestLearnThenTestChoosesHalfWay(t *testing.T) {
	var pts []point
	for i := 0; i < 11; i++ {
		pts = append(pts, point{float64(i) / 10, false, i})
	}
	pts = append(pts, point{2, true, 11}, point{3, true, 12})
	ch, err := learnThenTest(pts, Hallucination, 0.2, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Threshold != 1.5 || ch.K != 0 || ch.N != 11 || !ch.HasNext || ch.NextK != 1 {
		t.Errorf("got %+v, want threshold 1.5 (between 1 and 2), K 0 of 11, stopping at the next with 1", ch)
	}
	// Two logits closer than minGap are one level: no threshold between.
	pts = append(pts, point{2 + minGap/4, false, 13})
	ch, err = learnThenTest(pts, Hallucination, 0.2, 0.1)
	if err == nil && ch.Threshold < 2 {
		t.Errorf("a threshold %v splits logits %v apart", ch.Threshold, minGap/4)
	}
}

// The test's trials are groups: repeats in a group add nothing, and a
// group is on the wrong side when any of its examples is.
func TestLearnThenTestCountsGroups(t *testing.T) {
	// n groups of examples labeled 0 at logits 0, 0.1, ..., each repeated
	// reps times, and two labeled 1 far above.
	pts := func(n, reps int) []point {
		var out []point
		for r := 0; r < reps; r++ {
			for i := 0; i < n; i++ {
				out = append(out, point{float64(i) / 10, false, i})
			}
		}
		return append(out, point{5, true, n}, point{6, true, n + 1})
	}
	one, err := learnThenTest(pts(11, 1), Hallucination, 0.2, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	ten, err := learnThenTest(pts(11, 10), Hallucination, 0.2, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if ten.N != 11 || ten.Examples != 110 || ten.Threshold != one.Threshold || ten.K != one.K || ten.P != one.P {
		t.Errorf("11 groups of 10 repeats: %+v, want the test of 11 groups %+v", ten, one)
	}
	// 10 groups cannot give 0.2 at 0.9 (11 needed), however many repeats.
	if _, err := learnThenTest(pts(10, 100), Hallucination, 0.2, 0.1); err == nil || !strings.Contains(err.Error(), "10 independent examples labeled 0") {
		t.Errorf("10 groups of 100 repeats: got %v, want too few", err)
	}
	// A group counts once when any of its examples is answered: group 0
	// holds two more examples labeled 0, high among those labeled 1.
	mixed := append(pts(30, 1), point{5.5, false, 0}, point{5.6, false, 0})
	ch, err := learnThenTest(mixed, Hallucination, 0.3, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	answered := map[int]bool{}
	for _, p := range mixed {
		if !p.label && p.answered(ch.Threshold) {
			answered[p.group] = true
		}
	}
	if ch.N != 30 || ch.Examples != 32 || ch.K != len(answered) || !answered[0] {
		t.Errorf("n %d of %d examples, K %d at %v; want 30 groups of 32, K %d counting group 0 once", ch.N, ch.Examples, ch.K, ch.Threshold, len(answered))
	}
}
