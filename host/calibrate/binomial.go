package calibrate

import "math"

// BinomialCDF is P(X <= k) for X ~ Binomial(n, p), summed exactly term by
// term in log space. The terms come from P(X = 0) = (1-p)^n by the ratio
// P(X = i+1)/P(X = i) = (n-i)/(i+1) · p/(1-p), each added to a running
// log-sum-exp, so no term under- or overflows and the relative error grows
// with k by a few ulps per term (the tests check it against exact rational
// sums). It is the p-value of the hypothesis "the rate is more than p"
// when k of n independent trials failed: small when k is small for n.
func BinomialCDF(k, n int, p float64) float64 {
	switch {
	case n < 0 || math.IsNaN(p) || p < 0 || p > 1:
		return math.NaN()
	case k < 0:
		return 0
	case k >= n:
		return 1
	case p == 0:
		return 1
	case p == 1:
		return 0 // k < n: X = n for sure
	}
	logRatio := math.Log(p) - math.Log1p(-p)
	term := float64(n) * math.Log1p(-p) // log P(X = 0)
	sum := term                         // log of the running sum
	for i := 0; i < k; i++ {
		term += math.Log(float64(n-i)) - math.Log(float64(i+1)) + logRatio
		sum = logAddExp(sum, term)
	}
	return math.Min(1, math.Exp(sum))
}

// logAddExp is log(e^a + e^b) without overflow.
func logAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(b, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// MinExamples is the fewest examples for which any guarantee at rate alpha
// and confidence 1-delta exists: the n with (1-alpha)^n <= delta, when not
// one of them may fall on the wrong side of the threshold.
func MinExamples(alpha, delta float64) int {
	if !(alpha > 0 && alpha < 1 && delta > 0 && delta < 1) {
		return 0
	}
	n := int(math.Ceil(math.Log(delta) / math.Log1p(-alpha)))
	// The float ceiling can land one off either way near an integer.
	for n > 1 && BinomialCDF(0, n-1, alpha) <= delta {
		n--
	}
	for BinomialCDF(0, n, alpha) > delta {
		n++
	}
	return n
}

// MaxWrong is the most of n examples that may fall on the wrong side of a
// threshold for the binomial test at rate alpha to pass at 1-delta, or -1
// when even none is not enough (n < MinExamples).
func MaxWrong(n int, alpha, delta float64) int {
	k := -1
	for k+1 <= n && BinomialCDF(k+1, n, alpha) <= delta {
		k++
	}
	return k
}
