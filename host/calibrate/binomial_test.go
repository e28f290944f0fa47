package calibrate

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// Known tails, computed exactly with rational arithmetic (Python's
// fractions.Fraction and math.comb) and rounded to float64.
func TestBinomialCDFKnown(t *testing.T) {
	for _, c := range []struct {
		k, n int
		p    float64
		want float64
	}{
		{0, 10, 0.5, 0.0009765625},
		{0, 11, 0.2, 0.08589934592},
		{1, 18, 0.2, 0.09907919180215091},
		{2, 25, 0.2, 0.09822522284368862},
		{5, 100, 0.1, 0.05757688648703381},
		{30, 500, 0.1, 0.0010025497080229425},
		{1000, 10000, 0.1, 0.5084210392652658},
		{-1, 10, 0.3, 0},
		{10, 10, 0.3, 1},
		{3, 10, 0, 1},
		{3, 10, 1, 0},
	} {
		got := BinomialCDF(c.k, c.n, c.p)
		if !near(got, c.want, 1e-12) {
			t.Errorf("BinomialCDF(%d, %d, %v) = %.17g, want %.17g", c.k, c.n, c.p, got, c.want)
		}
	}
	if !math.IsNaN(BinomialCDF(1, 10, 1.5)) || !math.IsNaN(BinomialCDF(1, 10, math.NaN())) {
		t.Error("a probability outside [0,1] must give NaN")
	}
}

// The log-space sum matches the exact rational sum to 1e-12 relative
// error, for random n up to 200 and every k, including tails far below
// float64's smallest normal number's square root.
func TestBinomialCDFExact(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for trial := 0; trial < 40; trial++ {
		n := 1 + r.Intn(200)
		num, den := 1+r.Intn(19), 20
		p := float64(num) / float64(den)
		pr := big.NewRat(int64(num), int64(den))
		q := new(big.Rat).Sub(big.NewRat(1, 1), pr)
		sum := new(big.Rat)
		for k := 0; k < n; k++ {
			term := new(big.Rat).SetInt(new(big.Int).Binomial(int64(n), int64(k)))
			term.Mul(term, pow(pr, k))
			term.Mul(term, pow(q, n-k))
			sum.Add(sum, term)
			want, _ := sum.Float64()
			if got := BinomialCDF(k, n, p); !near(got, want, 1e-12) {
				t.Fatalf("BinomialCDF(%d, %d, %v) = %.17g, exact %.17g", k, n, p, got, want)
			}
		}
	}
}

func pow(x *big.Rat, n int) *big.Rat {
	out := big.NewRat(1, 1)
	for i := 0; i < n; i++ {
		out.Mul(out, x)
	}
	return out
}

func near(got, want, rel float64) bool {
	if want == 0 {
		return got == 0
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

func TestMinExamplesAndMaxWrong(t *testing.T) {
	for _, c := range []struct {
		alpha, delta float64
		min          int
	}{
		{0.2, 0.1, 11}, // 0.8^10 = 0.107, 0.8^11 = 0.086
		{0.1, 0.1, 22}, // 0.9^21 = 0.109, 0.9^22 = 0.098
		{0.05, 0.05, 59},
		{0.5, 0.5, 1},
	} {
		if got := MinExamples(c.alpha, c.delta); got != c.min {
			t.Errorf("MinExamples(%v, %v) = %d, want %d", c.alpha, c.delta, got, c.min)
		}
		if MaxWrong(c.min-1, c.alpha, c.delta) != -1 || MaxWrong(c.min, c.alpha, c.delta) != 0 {
			t.Errorf("MaxWrong disagrees with MinExamples at alpha %v delta %v", c.alpha, c.delta)
		}
	}
	// At alpha 0.2 and confidence 0.9, 18 examples allow one wrong and 25
	// two (the known tails above).
	if MaxWrong(18, 0.2, 0.1) != 1 || MaxWrong(25, 0.2, 0.1) != 2 || MaxWrong(24, 0.2, 0.1) != 1 {
		t.Errorf("MaxWrong(18|24|25, 0.2, 0.1) = %d %d %d, want 1 1 2",
			MaxWrong(18, 0.2, 0.1), MaxWrong(24, 0.2, 0.1), MaxWrong(25, 0.2, 0.1))
	}
}
