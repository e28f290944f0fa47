package gate

import (
	"math"
	"testing"
)

// expDetRef is expDet as it was, dividing in every Horner step and
// scaling with math.Ldexp: the reference its multiplications by exact
// powers of two are checked against bit for bit.
func expDetRef(x float64) float64 {
	if x != x {
		return 1
	}
	if x > 700 {
		x = 700
	}
	if x < -700 {
		x = -700
	}
	kf := x / ln2
	var k int
	if kf >= 0 {
		k = int(kf + 0.5)
	} else {
		k = -int(-kf + 0.5)
	}
	r := x - float64(float64(k)*ln2)
	sum := 1.0
	for i := 17; i >= 1; i-- {
		sum = 1 + float64(sum*r)/float64(i)
	}
	return math.Ldexp(sum, k)
}

func checkExpDet(t *testing.T, x float64) {
	t.Helper()
	if got, want := expDet(x), expDetRef(x); math.Float64bits(got) != math.Float64bits(want) {
		t.Fatalf("expDet(%v) = %v (%#x), reference %v (%#x)", x, got, math.Float64bits(got), want, math.Float64bits(want))
	}
}

func TestExpDetMatchesRef(t *testing.T) {
	for _, x := range []float64{0, -0.0, 1, -1, ln2 / 2, -ln2 / 2, ln2, 699.99, 700, 701, -700, -701,
		math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, -math.MaxFloat64, 5e-324, -5e-324} {
		checkExpDet(t, x)
	}
	// Every k from -1010 to 1010, each at and around the rounding edges.
	for k := -1011; k <= 1011; k++ {
		for _, d := range []float64{-0.5, -0.4999999, -0.25, 0, 0.25, 0.4999999, 0.5} {
			checkExpDet(t, (float64(k)+d)*ln2)
		}
	}
	for x := -40.0; x <= 40; x += 0.001953125 {
		checkExpDet(t, x)
	}
}

func FuzzExpDet(f *testing.F) {
	for _, x := range []float64{0, 1, -1, 700, -700, 12.5, -3.25} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) { checkExpDet(t, x) })
}
