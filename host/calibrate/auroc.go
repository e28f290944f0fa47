package calibrate

import (
	"math"
	"sort"
)

// z95 is the standard normal quantile for a two-sided 95% interval.
const z95 = 1.959963984540054

// delong holds one score's DeLong placements: for each positive the share
// of negatives it beats (ties count one half), and for each negative the
// share of positives that beat it. Their means are the AUROC; their
// variances give its standard error (DeLong, DeLong, Clarke-Pearson 1988).
type delong struct {
	pos, neg []float64
}

func placements(scores []float64, labels []bool) delong {
	var ps, ns []float64
	for i, s := range scores {
		if labels[i] {
			ps = append(ps, s)
		} else {
			ns = append(ns, s)
		}
	}
	sortedP := append([]float64(nil), ps...)
	sortedN := append([]float64(nil), ns...)
	sort.Float64s(sortedP)
	sort.Float64s(sortedN)
	// below(xs, v): how many of sorted xs are < v, plus half of those == v.
	below := func(xs []float64, v float64) float64 {
		lo := sort.SearchFloat64s(xs, v)
		hi := lo
		for hi < len(xs) && xs[hi] == v {
			hi++
		}
		return float64(lo) + float64(hi-lo)/2
	}
	d := delong{pos: make([]float64, len(ps)), neg: make([]float64, len(ns))}
	for i, v := range ps {
		d.pos[i] = below(sortedN, v) / float64(len(ns))
	}
	for j, v := range ns {
		d.neg[j] = 1 - below(sortedP, v)/float64(len(ps))
	}
	return d
}

func (d delong) auc() float64 { return mean(d.pos) }

// cov is the DeLong covariance of two AUROCs over the same examples.
func (d delong) cov(e delong) float64 {
	return covar(d.pos, e.pos)/float64(len(d.pos)) + covar(d.neg, e.neg)/float64(len(d.neg))
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// covar is the sample covariance (n-1); NaN with fewer than two values.
func covar(a, b []float64) float64 {
	if len(a) < 2 {
		return math.NaN()
	}
	ma, mb := mean(a), mean(b)
	s := 0.0
	for i := range a {
		s += (a[i] - ma) * (b[i] - mb)
	}
	return s / float64(len(a)-1)
}

// Interval is an estimate with its two-sided 95% interval. Lo and Hi are
// NaN when the examples cannot give one (fewer than two of a label).
type Interval struct {
	Value, Lo, Hi float64
}

// AUROCComparison is the held-out AUROC of the calibrated policy and of
// its base on the same examples, with DeLong 95% intervals, and their
// paired difference.
type AUROCComparison struct {
	Positive int      `json:"positive"`
	Negative int      `json:"negative"`
	Policy   Interval `json:"policy"`
	Base     Interval `json:"base"`
	Diff     Interval `json:"difference"` // policy - base, paired
}

// compareAUROC compares two confidences over the same labeled examples.
func compareAUROC(policy, base []float64, labels []bool) AUROCComparison {
	var c AUROCComparison
	for _, l := range labels {
		if l {
			c.Positive++
		} else {
			c.Negative++
		}
	}
	nan := math.NaN()
	if c.Positive == 0 || c.Negative == 0 {
		c.Policy, c.Base, c.Diff = Interval{nan, nan, nan}, Interval{nan, nan, nan}, Interval{nan, nan, nan}
		return c
	}
	a, b := placements(policy, labels), placements(base, labels)
	iv := func(v, variance float64) Interval {
		if math.IsNaN(variance) {
			return Interval{v, nan, nan}
		}
		h := z95 * math.Sqrt(math.Max(variance, 0))
		return Interval{v, v - h, v + h}
	}
	clip := func(i Interval) Interval {
		if !math.IsNaN(i.Lo) {
			i.Lo, i.Hi = math.Max(0, i.Lo), math.Min(1, i.Hi)
		}
		return i
	}
	c.Policy = clip(iv(a.auc(), a.cov(a)))
	c.Base = clip(iv(b.auc(), b.cov(b)))
	c.Diff = iv(a.auc()-b.auc(), a.cov(a)+b.cov(b)-2*a.cov(b))
	return c
}
