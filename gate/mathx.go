package gate

import (
	"math"
	"strconv"
)

// Deterministic numeric helpers. The core avoids math.Exp/Log/Pow because
// amd64 has assembly versions that can differ in the last bit from the
// pure-Go versions used on wasm; everything here is + - * / and math.Sqrt,
// which IEEE 754 defines exactly. Products that feed a sum are wrapped in
// float64(...) so the compiler may not fuse them into an FMA on platforms
// that have one (the Go spec allows fusion only without an explicit
// conversion).

func clamp01(x float64) float64 {
	if x != x { // NaN
		return 0
	}
	if x < 0 {
		return 0
	}
	if x > 1 {
		return 1
	}
	return x
}

func minf(a, b float64) float64 {
	if a < b {
		return a
	}
	return b
}

func maxf(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

const ln2 = 0.6931471805599453

// expDet is e^x computed by range reduction x = k·ln2 + r, |r| <= ln2/2, and
// a fixed-length Taylor series for e^r (error below 1e-15 relative), then an
// exact scaling by 2^k. Inputs are clamped to [-700, 700] so the result is
// finite and positive.
func expDet(x float64) float64 {
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
	// Horner form of sum r^i/i!, i = 0..17; each step rounded explicitly.
	// Dividing by a power of two is multiplying by its exact reciprocal
	// (both round the same real number, TestExpDetMatchesRef), so those
	// steps multiply: the steps depend on each other, and a division takes
	// several times a multiplication's latency. Written out, as a loop over
	// a table of divisors would need a branch per step to tell them apart.
	sum := 1 + r/17
	sum = 1 + float64(float64(sum*r)*(1.0/16))
	sum = 1 + float64(sum*r)/15
	sum = 1 + float64(sum*r)/14
	sum = 1 + float64(sum*r)/13
	sum = 1 + float64(sum*r)/12
	sum = 1 + float64(sum*r)/11
	sum = 1 + float64(sum*r)/10
	sum = 1 + float64(sum*r)/9
	sum = 1 + float64(float64(sum*r)*(1.0/8))
	sum = 1 + float64(sum*r)/7
	sum = 1 + float64(sum*r)/6
	sum = 1 + float64(sum*r)/5
	sum = 1 + float64(float64(sum*r)*(1.0/4))
	sum = 1 + float64(sum*r)/3
	sum = 1 + float64(float64(sum*r)*(1.0/2))
	sum = 1 + float64(sum*r)
	// sum is in [0.7, 1.42] and |k| <= 1010, so sum·2^k is a normal number
	// and the product with 2^k built from its bits is exact: the bits
	// math.Ldexp gives (TestExpDetMatchesRef), without its normalising steps,
	// which under TinyGo were a sixth of a sigmoid.
	return float64(sum * math.Float64frombits(uint64(k+1023)<<52))
}

// sigmoid is the logistic function over expDet.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + expDet(-x))
	}
	e := expDet(x)
	return e / (1 + e)
}

// pow2 is 2^x (used for half-life decay: 0.5^(age/h) = 2^(-age/h)).
func pow2(x float64) float64 { return expDet(float64(x * ln2)) }

// appendPercent appends x like Python's "{:.0%}": x·100 rounded
// half-to-even on the exact binary value, which is what strconv does too.
func appendPercent(dst []byte, x float64) []byte {
	return append(appendFixed(dst, float64(x*100), 0), '%')
}

// appendFixed appends x with n decimals (n <= 3) as strconv.AppendFloat(dst,
// x, 'f', n, 64) does: the exact binary value rounded half-to-even, a minus
// sign whenever x has its sign bit. strconv's fixed-precision path is its
// big-decimal shifts, and under TinyGo it allocates: three numbers in a
// decision's messages were 2.5% of a 20-chunk decision in the module, and
// its only garbage. The rounding is round3's (roundScaled); |x| >= 1e12 and
// non-finite x are left to strconv (TestAppendFixedMatchesStrconv).
func appendFixed(dst []byte, x float64, n int) []byte {
	if n < 0 || n > 3 || !finite(x) || x >= 1e12 || x <= -1e12 {
		return strconv.AppendFloat(dst, x, 'f', n, 64)
	}
	r := roundScaled(x, fixedScale[n])
	if math.Signbit(x) {
		dst = append(dst, '-')
		r = -r
	}
	var buf [24]byte
	i := len(buf)
	u := uint64(r)
	for k := 0; k < n; k++ {
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
	}
	if n > 0 {
		i--
		buf[i] = '.'
	}
	for {
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	return append(dst, buf[i:]...)
}

// fixedScale[n] is 10^n for appendFixed.
var fixedScale = [4]float64{1, 10, 100, 1000}

// fixed formats x with n decimals (for human-readable strings).
func fixed(x float64, n int) string { return strconv.FormatFloat(x, 'f', n, 64) }

// cosine is the cosine similarity of two equal-length vectors; 0 when either
// has zero norm.
func cosine(a, b []float64) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i] * b[i])
		na += float64(a[i] * a[i])
		nb += float64(b[i] * b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}

// pearson returns the correlation of x and y and whether it is defined
// (at least 2 points and neither series constant).
func pearson(x, y []float64) (float64, bool) {
	n := len(x)
	if n < 2 || len(y) != n {
		return 0, false
	}
	var mx, my float64
	for i := 0; i < n; i++ {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxy, sxx, syy float64
	for i := 0; i < n; i++ {
		dx, dy := x[i]-mx, y[i]-my
		sxy += float64(dx * dy)
		sxx += float64(dx * dx)
		syy += float64(dy * dy)
	}
	if sxx == 0 || syy == 0 {
		return 0, false
	}
	r := sxy / (math.Sqrt(sxx) * math.Sqrt(syy))
	if r > 1 {
		r = 1
	}
	if r < -1 {
		r = -1
	}
	return r, true
}

// averageRanks writes into dst the 1-based ranks of x (ascending), ties
// sharing the mean of their positions, as Spearman's rho requires. It uses
// an insertion sort over indices: n is small and the order is stable.
func averageRanks(x []float64, idx []int, dst []float64) {
	n := len(x)
	for i := 0; i < n; i++ {
		idx[i] = i
	}
	for i := 1; i < n; i++ {
		for j := i; j > 0 && x[idx[j]] < x[idx[j-1]]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	for i := 0; i < n; {
		j := i
		for j+1 < n && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		r := float64(i+j)/2 + 1
		for t := i; t <= j; t++ {
			dst[idx[t]] = r
		}
		i = j + 1
	}
}

// spearman is Pearson over average ranks.
func spearman(x, y []float64) (float64, bool) {
	n := len(x)
	return spearmanInto(x, y, make([]int, n), make([]float64, n), make([]float64, n))
}

// spearmanInto is spearman with the caller's scratch (each at least len(x)
// long), so the engine ranks without allocating.
func spearmanInto(x, y []float64, idx []int, rx, ry []float64) (float64, bool) {
	n := len(x)
	if n < 2 || len(y) != n || len(idx) < n || len(rx) < n || len(ry) < n {
		return 0, false
	}
	rx, ry = rx[:n], ry[:n]
	averageRanks(x, idx, rx)
	averageRanks(y, idx, ry)
	return pearson(rx, ry)
}

// popStd is the population standard deviation.
func popStd(x []float64) float64 {
	n := len(x)
	if n == 0 {
		return 0
	}
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(n)
	var s float64
	for _, v := range x {
		d := v - m
		s += float64(d * d)
	}
	return math.Sqrt(s / float64(n))
}

// sortDesc stable-sorts idx by key descending (ties keep their order) with a
// bottom-up merge sort; tmp must have len(idx). O(n log n) and no
// reflection, so it is cheap under TinyGo and hostile sizes stay fast.
func sortDesc(idx []int, key []float64, tmp []int) {
	n := len(idx)
	src, dst := idx, tmp[:n]
	for width := 1; width < n; width *= 2 {
		for lo := 0; lo < n; lo += 2 * width {
			mid, hi := lo+width, lo+2*width
			if mid > n {
				mid = n
			}
			if hi > n {
				hi = n
			}
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				if key[src[j]] > key[src[i]] {
					dst[k] = src[j]
					j++
				} else {
					dst[k] = src[i]
					i++
				}
				k++
			}
			// The rest of a run is a few elements: copied in the loop, not
			// by copy, which is a memory.copy, a call of the Go runtime's
			// memmove under wazero (127 of them per 20-chunk decision).
			for ; i < mid; i++ {
				dst[k] = src[i]
				k++
			}
			for ; j < hi; j++ {
				dst[k] = src[j]
				k++
			}
		}
		src, dst = dst, src
	}
	if n > 0 && &src[0] != &idx[0] {
		copy(idx, src)
	}
}

// snap rounds x to 9 decimal places. Scores are snapped before any threshold
// compares them, so arithmetic noise (0.2·0.35/0.2 = 0.34999999999999997)
// cannot flip a decision that the printed numbers say should not flip, and a
// correlation of exactly 1 is 1.
func snap(x float64) float64 {
	if !finite(x) {
		return x
	}
	return math.Round(float64(x*1e9)) / 1e9
}

// round3 rounds x to 3 decimals as Python's round(x, 3) does (the
// confidence-scoring scorer's to_dict()): the exact binary value of x to the
// nearest multiple of 0.001, ties to even, returned as the double nearest
// that decimal. y = x·1000 is rounded once; only when it lands exactly on a
// half can the exact product lie on either side, and its error (Dekker's
// product, + - * only) decides. |x| >= 1e12 is returned as is (no score is
// that large; the product could no longer hold the fraction).
func round3(x float64) float64 {
	if !finite(x) || x >= 1e12 || x <= -1e12 {
		return x
	}
	return roundScaled(x, 1000) / 1000
}

// roundScaled is the exact binary value of x·m (m = 10^n, n <= 3; finite
// |x| < 1e12) rounded to an integer, ties to even.
func roundScaled(x, m float64) float64 {
	y := float64(x * m)
	f := math.Floor(y)
	r := f
	switch d := y - f; {
	case d > 0.5:
		r = f + 1
	case d == 0.5:
		// Veltkamp's split: hi has at most 26 significant bits, so hi·1000
		// and lo·1000 are exact, and so is the error of y.
		c := float64(134217729 * x)
		hi := c - (c - x)
		lo := x - hi
		e := (float64(hi*m) - y) + float64(lo*m)
		if e > 0 || (e == 0 && math.Mod(f, 2) != 0) {
			r = f + 1
		}
	}
	return r
}
