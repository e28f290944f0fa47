package logistic

import (
	"math"
	"math/rand"
	"testing"
)

// Fit recovers known weights from enough synthetic data drawn from the
// model itself.
func TestFitRecoversWeights(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	want := Model{W: []float64{2.5, -1.5, 0}, B: -0.5}
	var x [][]float64
	var y []bool
	for i := 0; i < 20000; i++ {
		row := []float64{r.Float64(), r.NormFloat64(), r.Float64() * 10}
		x = append(x, row)
		y = append(y, r.Float64() < want.Prob(row))
	}
	m, err := Fit(x, y, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for j := range want.W {
		if math.Abs(m.W[j]-want.W[j]) > 0.12 {
			t.Errorf("W[%d] = %.3f, want %.3f", j, m.W[j], want.W[j])
		}
	}
	if math.Abs(m.B-want.B) > 0.12 {
		t.Errorf("B = %.3f, want %.3f", m.B, want.B)
	}
}

// Weights count rows: a row of weight 2 fits as two copies of it.
func TestFitWeightsAreCopies(t *testing.T) {
	x := [][]float64{{0}, {1}, {2}, {3}, {1.5}}
	y := []bool{false, false, true, true, true}
	a, err := Fit(x, y, []float64{1, 2, 1, 1, 1}, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Fit(append(x, []float64{1}), append(y, false), nil, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(a.W[0]-b.W[0]) > 1e-9 || math.Abs(a.B-b.B) > 1e-9 {
		t.Errorf("weighted %v %v, copied %v %v", a.W, a.B, b.W, b.B)
	}
}

func TestFitRejects(t *testing.T) {
	if _, err := Fit(nil, nil, nil, 0); err == nil {
		t.Error("no rows: want an error")
	}
	if _, err := Fit([][]float64{{1}, {2}}, []bool{true, true}, nil, 0); err != ErrOneClass {
		t.Errorf("one class: got %v", err)
	}
	if _, err := Fit([][]float64{{1}, {2, 3}}, []bool{true, false}, nil, 0); err == nil {
		t.Error("ragged rows: want an error")
	}
}

// Separable data stays finite under a penalty.
func TestFitSeparable(t *testing.T) {
	m, err := Fit([][]float64{{0}, {1}, {2}, {3}}, []bool{false, false, true, true}, nil, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(m.W[0]) || math.IsInf(m.W[0], 0) || m.W[0] <= 0 {
		t.Errorf("W = %v", m.W)
	}
}
