package eval

import (
	"math"
	"sort"
)

// AUROC is the probability that a random positive scores above a random
// negative, ties counting one half: the Mann-Whitney U statistic from
// average ranks. It is NaN when either class is empty.
func AUROC(scores []float64, labels []bool) float64 {
	n := len(scores)
	if n != len(labels) {
		return math.NaN()
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] < scores[idx[b]] })
	var rankSumPos float64
	var nPos, nNeg float64
	for i := 0; i < n; {
		j := i
		for j < n && scores[idx[j]] == scores[idx[i]] {
			j++
		}
		avg := float64(i+j+1) / 2 // ranks i+1..j averaged
		for t := i; t < j; t++ {
			if labels[idx[t]] {
				rankSumPos += avg
			}
		}
		i = j
	}
	for _, l := range labels {
		if l {
			nPos++
		} else {
			nNeg++
		}
	}
	if nPos == 0 || nNeg == 0 {
		return math.NaN()
	}
	return (rankSumPos - nPos*(nPos+1)/2) / (nPos * nNeg)
}

// CurvePoint is one operating point of selective answering: answer the
// questions whose confidence is at least Threshold.
type CurvePoint struct {
	Threshold float64
	Coverage  float64 // fraction answered
	Accuracy  float64 // fraction of answered that were answerable
}

// CoverageCurve is the accuracy/coverage (risk/coverage) curve of answering
// by confidence: one point per distinct confidence, from the most confident
// down. Tied confidences enter together, since no threshold can split them.
func CoverageCurve(conf []float64, labels []bool) []CurvePoint {
	n := len(conf)
	if n == 0 || n != len(labels) {
		return nil
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return conf[idx[a]] > conf[idx[b]] })
	var pts []CurvePoint
	correct := 0
	for i := 0; i < n; {
		j := i
		for j < n && conf[idx[j]] == conf[idx[i]] {
			if labels[idx[j]] {
				correct++
			}
			j++
		}
		pts = append(pts, CurvePoint{Threshold: conf[idx[i]], Coverage: float64(j) / float64(n),
			Accuracy: float64(correct) / float64(j)})
		i = j
	}
	return pts
}

// AURC is the area under the accuracy/coverage curve (trapezoids, starting
// flat from coverage 0 at the first point's accuracy): 1 is perfect, and the
// base rate is what answering at random gives.
func AURC(pts []CurvePoint) float64 {
	if len(pts) == 0 {
		return math.NaN()
	}
	area := pts[0].Coverage * pts[0].Accuracy
	for i := 1; i < len(pts); i++ {
		area += (pts[i].Coverage - pts[i-1].Coverage) * (pts[i].Accuracy + pts[i-1].Accuracy) / 2
	}
	return area
}

// AccuracyAt is the accuracy of the curve at the smallest coverage >= c.
func AccuracyAt(pts []CurvePoint, c float64) float64 {
	for _, p := range pts {
		if p.Coverage >= c-1e-12 {
			return p.Accuracy
		}
	}
	return math.NaN()
}

// PR is precision and recall of a binary decision against labels.
type PR struct {
	TP, FP, FN, TN int
}

// Add counts one decision.
func (p *PR) Add(predicted, actual bool) {
	switch {
	case predicted && actual:
		p.TP++
	case predicted && !actual:
		p.FP++
	case !predicted && actual:
		p.FN++
	default:
		p.TN++
	}
}

// Precision is TP/(TP+FP), NaN when nothing was predicted.
func (p PR) Precision() float64 { return ratio(p.TP, p.TP+p.FP) }

// Recall is TP/(TP+FN), NaN when nothing was positive.
func (p PR) Recall() float64 { return ratio(p.TP, p.TP+p.FN) }

// F1 is the harmonic mean of precision and recall.
func (p PR) F1() float64 { return ratio(2*p.TP, 2*p.TP+p.FP+p.FN) }

// HallucinationRate is NoMIRACL's hallucination rate (Thakur et al., 2024)
// applied to the gate: over the questions whose evidence does not answer
// them (the non-relevant subset), the fraction the gate let through to be
// answered. Here "predicted" is "answered" and "actual" is "answerable".
func (p PR) HallucinationRate() float64 { return ratio(p.FP, p.FP+p.TN) }

// ErrorRate is NoMIRACL's error rate: over the questions whose evidence does
// answer them (the relevant subset), the fraction the gate withheld.
func (p PR) ErrorRate() float64 { return ratio(p.FN, p.TP+p.FN) }

// Coverage is the fraction answered.
func (p PR) Coverage() float64 { return ratio(p.TP+p.FP, p.TP+p.FP+p.FN+p.TN) }

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}
