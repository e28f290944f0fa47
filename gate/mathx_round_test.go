package gate

import (
	"math"
	"math/rand"
	"strconv"
	"testing"
)

// round3Ref is Python's round(x, 3): strconv rounds the exact binary value
// to 3 decimals, ties to even, and parsing takes the nearest double.
func round3Ref(x float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 3, 64), 64)
	return r
}

func TestRound3MatchesPython(t *testing.T) {
	xs := []float64{0, 0.0005, 0.0015, 0.0025, 0.0625, 0.1875, 0.3125, 0.4375, 0.5625, 0.6875, 0.8125, 0.9375,
		1.0625, 0.7745, 0.7755, 0.775, 0.29966666666666664, 2.675, 1.0005, 12345.6785, 0.9999, 0.99950000000000005}
	// Every dyadic tie k/2000 (k odd, 125 | k) below 64, and its neighbours.
	for k := 125; k < 128000; k += 250 {
		x := float64(k) / 2000
		xs = append(xs, x, math.Nextafter(x, 0), math.Nextafter(x, 2e5))
	}
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 200000; i++ {
		xs = append(xs, r.Float64(), r.Float64()*20, float64(r.Intn(1_000_000))/1000+0.0005)
	}
	for _, x := range xs {
		for _, v := range []float64{x, -x} {
			if got, want := round3(v), round3Ref(v); got != want && !(got == 0 && want == 0) {
				t.Fatalf("round3(%v) = %v, want %v", v, got, want)
			}
		}
	}
	if got := round3(1e13); got != 1e13 {
		t.Errorf("round3(1e13) = %v", got)
	}
}

// appendFixed must write what strconv.AppendFloat(x, 'f', n) writes: ties
// (k/2000 and k/200 and their neighbours), random scores and percentages,
// signs and zeros, and the values it leaves to strconv.
func TestAppendFixedMatchesStrconv(t *testing.T) {
	xs := []float64{0, math.Copysign(0, -1), 0.005, 0.015, 0.125, 0.375, 2.5, 3.5, 0.0049999, 1e-300, 0.994999, 0.995,
		99.5, 100.5, 1e11 + 0.5, 999999999999.5, 1e12, 1e20, math.Inf(1), math.NaN(), math.MaxFloat64, 5e-324}
	// Every half-thousandth up to 128, and random values: 1.3 million in
	// all natively. -short (how scripts/test-tinygo.sh runs it, where
	// strconv is ~30x slower and this took 270 s) keeps a sixteenth.
	step, random := 2, 200000
	if testing.Short() {
		step, random = 32, 200000/16
	}
	for k := 1; k < 256000; k += step {
		x := float64(k) / 2000
		xs = append(xs, x, math.Nextafter(x, 0), math.Nextafter(x, 1e9), x/10)
	}
	r := rand.New(rand.NewSource(4))
	for i := 0; i < random; i++ {
		xs = append(xs, r.Float64(), float64(r.Float64()*100), r.NormFloat64()*1e6, math.Float64frombits(r.Uint64()))
	}
	var got, want []byte
	for _, x := range xs {
		for _, v := range []float64{x, -x} {
			for n := 0; n <= 3; n++ {
				got, want = appendFixed(got[:0], v, n), strconv.AppendFloat(want[:0], v, 'f', n, 64)
				if string(got) != string(want) {
					t.Fatalf("appendFixed(%v, %d) = %s, want %s", v, n, got, want)
				}
			}
		}
	}
}

func FuzzAppendFixed(f *testing.F) {
	f.Add(0.125, uint8(2))
	f.Add(99.5, uint8(0))
	f.Fuzz(func(t *testing.T, x float64, n uint8) {
		p := int(n % 5)
		if got, want := appendFixed(nil, x, p), strconv.AppendFloat(nil, x, 'f', p, 64); string(got) != string(want) {
			t.Fatalf("appendFixed(%v, %d) = %s, want %s", x, p, got, want)
		}
	})
}
