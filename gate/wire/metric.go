package wire

// VectorMetric names how a request's scores.vector were measured
// (docs/decision.md has the table of vector stores and what to set).
type VectorMetric string

// The vector metrics. Cosine is the default and means what scores.vector
// always meant: a cosine similarity in [-1, 1].
const (
	MetricCosine         VectorMetric = "cosine"          // cosine similarity, higher is closer
	MetricDot            VectorMetric = "dot"             // inner product, unbounded, higher is closer
	MetricL2             VectorMetric = "l2"              // Euclidean distance, lower is closer
	MetricL2Squared      VectorMetric = "l2_squared"      // squared Euclidean distance, lower is closer
	MetricCosineDistance VectorMetric = "cosine_distance" // 1 - cosine similarity, lower is closer
	MetricNegativeDot    VectorMetric = "negative_dot"    // minus the inner product (pgvector <#>), lower is closer
)

// VectorMetrics lists every metric in the order errors and docs name them.
var VectorMetrics = [...]VectorMetric{MetricCosine, MetricDot, MetricL2, MetricL2Squared, MetricCosineDistance, MetricNegativeDot}

// RerankScale names what a request's scores.rerank are.
type RerankScale string

// The rerank scales. Without one, the rule by value applies: any rerank
// score outside [0,1] makes them all logits.
const (
	RerankProbability RerankScale = "probability" // in [0,1], used as they are
	RerankLogit       RerankScale = "logit"       // through the logistic function
)

// RerankScales lists every scale in the order errors and docs name them.
var RerankScales = [...]RerankScale{RerankProbability, RerankLogit}

// ParseVectorMetric returns the metric named s, as the constant (so a
// decoder keeps no string of the request's), or false.
func ParseVectorMetric(s string) (VectorMetric, bool) {
	if i := VectorMetricIndex(s); i >= 0 {
		return VectorMetrics[i], true
	}
	return "", false
}

// VectorMetricIndex is the index in VectorMetrics of the metric named s,
// or -1.
func VectorMetricIndex(s string) int {
	for i, m := range VectorMetrics {
		if string(m) == s {
			return i
		}
	}
	return -1
}

// ParseRerankScale returns the scale named s, as the constant, or false.
func ParseRerankScale(s string) (RerankScale, bool) {
	for _, r := range RerankScales {
		if string(r) == s {
			return r, true
		}
	}
	return "", false
}
