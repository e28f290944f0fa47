package experimental

import "math"

// Logistic is a logistic model over standardised features. Fit is plain
// full-batch gradient descent from zero weights with a fixed step count: no
// randomness, so the same data always gives the same weights.
type Logistic struct {
	Names    []string
	Mean, SD []float64 // standardisation, from the training rows
	W        []float64 // weights on standardised features
	B        float64
}

// FitLogistic fits rows x (n x d) to labels y with L2 penalty l2.
func FitLogistic(names []string, x [][]float64, y []bool, steps int, lr, l2 float64) *Logistic {
	d := len(names)
	m := &Logistic{Names: names, Mean: make([]float64, d), SD: make([]float64, d), W: make([]float64, d)}
	n := float64(len(x))
	for j := 0; j < d; j++ {
		for _, r := range x {
			m.Mean[j] += r[j]
		}
		m.Mean[j] /= n
		for _, r := range x {
			m.SD[j] += (r[j] - m.Mean[j]) * (r[j] - m.Mean[j])
		}
		m.SD[j] = math.Sqrt(m.SD[j] / n)
		if m.SD[j] == 0 {
			m.SD[j] = 1
		}
	}
	xs := make([][]float64, len(x))
	for i, r := range x {
		xs[i] = make([]float64, d)
		for j := range r {
			xs[i][j] = (r[j] - m.Mean[j]) / m.SD[j]
		}
	}
	g := make([]float64, d)
	for s := 0; s < steps; s++ {
		for j := range g {
			g[j] = l2 * m.W[j]
		}
		var gb float64
		for i, r := range xs {
			p := sig(m.lin(r))
			t := 0.0
			if y[i] {
				t = 1
			}
			e := (p - t) / n
			for j := range r {
				g[j] += e * r[j]
			}
			gb += e
		}
		for j := range g {
			m.W[j] -= lr * g[j]
		}
		m.B -= lr * gb
	}
	return m
}

func (m *Logistic) lin(std []float64) float64 {
	s := m.B
	for j, v := range std {
		s += m.W[j] * v
	}
	return s
}

// Score is the model's probability for a raw feature row.
func (m *Logistic) Score(row []float64) float64 {
	std := make([]float64, len(row))
	for j, v := range row {
		std[j] = (v - m.Mean[j]) / m.SD[j]
	}
	return sig(m.lin(std))
}

// Raw folds the standardisation into the weights: probability =
// sigmoid(RawB + sum RawW[j]*x[j]) on raw features, which is what a policy
// ships.
func (m *Logistic) Raw() (w []float64, b float64) {
	b = m.B
	for j := range m.W {
		w = append(w, m.W[j]/m.SD[j])
		b -= m.W[j] * m.Mean[j] / m.SD[j]
	}
	return w, b
}

func sig(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
