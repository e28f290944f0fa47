// Package logistic fits logistic regression models for the host side:
// the quality evaluation (bench/eval) and calibration (ctxgate calibrate).
// The gate only ever evaluates the fitted models; it never fits one.
package logistic

import (
	"errors"
	"math"
)

// Model is sigmoid(B + sum W[j]·x[j]) on raw features.
type Model struct {
	W []float64
	B float64
}

// Logit is the model's log-odds for one row of raw features.
func (m *Model) Logit(x []float64) float64 {
	z := m.B
	for j, w := range m.W {
		z += w * x[j]
	}
	return z
}

// Prob is the model's probability for one row.
func (m *Model) Prob(x []float64) float64 { return 1 / (1 + math.Exp(-m.Logit(x))) }

// ErrOneClass is returned when every label is the same: no weight separates
// one class from nothing.
var ErrOneClass = errors.New("logistic: every example has the same label")

// Fit fits a model to rows x (n × d) and labels y by Newton's method
// (iteratively reweighted least squares) on standardised features, with an
// L2 penalty l2 on the standardised weights (not the bias), then folds the
// standardisation back into raw weights. Newton's method reaches the one
// optimum of this convex problem in a few steps, with no step size and no
// randomness: the same rows always give the same weights. weight, when not
// nil, weighs each row (a set of many rows counting no more than a small
// one).
func Fit(x [][]float64, y []bool, weight []float64, l2 float64) (*Model, error) {
	n := len(x)
	if n == 0 || n != len(y) || (weight != nil && len(weight) != n) {
		return nil, errors.New("logistic: rows, labels and weights must be as many, and not none")
	}
	pos := 0
	for _, l := range y {
		if l {
			pos++
		}
	}
	if pos == 0 || pos == n {
		return nil, ErrOneClass
	}
	d := len(x[0])
	wt := func(i int) float64 {
		if weight == nil {
			return 1
		}
		return weight[i]
	}
	total := 0.0
	for i := range x {
		if len(x[i]) != d {
			return nil, errors.New("logistic: rows differ in length")
		}
		total += wt(i)
	}
	mean, sd := make([]float64, d), make([]float64, d)
	for i, r := range x {
		for j, v := range r {
			mean[j] += wt(i) * v / total
		}
	}
	for i, r := range x {
		for j, v := range r {
			sd[j] += wt(i) * (v - mean[j]) * (v - mean[j]) / total
		}
	}
	for j := range sd {
		sd[j] = math.Sqrt(sd[j])
		if sd[j] == 0 {
			sd[j] = 1
		}
	}
	xs := make([][]float64, n)
	for i, r := range x {
		xs[i] = make([]float64, d)
		for j, v := range r {
			xs[i][j] = (v - mean[j]) / sd[j]
		}
	}
	D := d + 1 // the bias is last
	p := make([]float64, D)
	g := make([]float64, D)
	h := make([][]float64, D)
	for a := range h {
		h[a] = make([]float64, D)
	}
	for iter := 0; iter < 100; iter++ {
		for a := range g {
			g[a] = 0
			for b := range h[a] {
				h[a][b] = 0
			}
		}
		for i, r := range xs {
			z := p[d]
			for j, v := range r {
				z += p[j] * v
			}
			pr := 1 / (1 + math.Exp(-z))
			t := 0.0
			if y[i] {
				t = 1
			}
			e := wt(i) * (pr - t) / total
			v := wt(i) * pr * (1 - pr) / total
			for a := 0; a < D; a++ {
				xa := 1.0
				if a < d {
					xa = r[a]
				}
				g[a] += e * xa
				for b := a; b < D; b++ {
					xb := 1.0
					if b < d {
						xb = r[b]
					}
					h[a][b] += v * xa * xb
				}
			}
		}
		for a := 0; a < D; a++ {
			for b := 0; b < a; b++ {
				h[a][b] = h[b][a]
			}
			if a < d {
				g[a] += l2 * p[a]
				h[a][a] += l2
			}
			h[a][a] += 1e-12 // separable data: keep the system solvable
		}
		step := solve(h, g)
		big := 0.0
		for a := range p {
			p[a] -= step[a]
			big = math.Max(big, math.Abs(step[a]))
		}
		if big < 1e-10 {
			break
		}
	}
	m := &Model{W: make([]float64, d), B: p[d]}
	for j := range m.W {
		m.W[j] = p[j] / sd[j]
		m.B -= p[j] * mean[j] / sd[j]
	}
	return m, nil
}

// solve solves a small dense system by Gauss-Jordan elimination with
// partial pivoting.
func solve(a [][]float64, b []float64) []float64 {
	n := len(b)
	m := make([][]float64, n)
	for i := range a {
		m[i] = append(append([]float64{}, a[i]...), b[i])
	}
	for c := 0; c < n; c++ {
		piv := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[piv][c]) {
				piv = r
			}
		}
		m[c], m[piv] = m[piv], m[c]
		if m[c][c] == 0 {
			continue
		}
		for r := 0; r < n; r++ {
			if r == c {
				continue
			}
			f := m[r][c] / m[c][c]
			for k := c; k <= n; k++ {
				m[r][k] -= f * m[c][k]
			}
		}
	}
	x := make([]float64, n)
	for i := range x {
		if m[i][i] != 0 {
			x[i] = m[i][n] / m[i][i]
		}
	}
	return x
}
