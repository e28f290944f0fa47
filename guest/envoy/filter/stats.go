package filter

import "github.com/proxy-wasm/proxy-wasm-go-sdk/proxywasm"

// Metric names. Envoy exposes them under the "wasmcustom." prefix (Prometheus:
// envoy_wasmcustom_ctxgate_action_inject, ...); examples/envoy/envoy.yaml
// shows stats_tags that turn the last segment into a label.
const (
	MetricRequests       = "ctxgate.requests"       // requests the gate ran on
	MetricActionPrefix   = "ctxgate.action."        // + inject|caveat|fallback|refuse|error|skip
	MetricLevelPrefix    = "ctxgate.level."         // + sufficient|partial|insufficient
	MetricRefusalPrefix  = "ctxgate.refusal."       // + hard|soft
	MetricErrorPrefix    = "ctxgate.error."         // + bad_json|bad_field|limit|bad_policy|internal
	MetricAnswersChecked = "ctxgate.answer.checked" // responses run through the answer check
	MetricAnswerUnknown  = "ctxgate.answer.unknown_citations"
	MetricAnswerUncited  = "ctxgate.answer.uncited_sentences"
	MetricAnswerStream   = "ctxgate.answer.stream_unchecked" // SSE responses: headers only
	MetricConfidenceBP   = "ctxgate.confidence_bp"           // histogram, basis points 0..10000
	MetricGateTimeUS     = "ctxgate.gate_time_us"            // histogram, microseconds
)

var (
	actions  = []string{"inject", "caveat", "fallback", "refuse", "error", "skip"}
	levels   = []string{"sufficient", "partial", "insufficient"}
	refusals = []string{"hard", "soft"}
	errCodes = []string{"bad_json", "bad_field", "limit", "bad_policy", "internal"}
)

// stats holds the metric handles, defined once per plugin (VM) at start.
// Every label value is defined up front, so the set of metrics is fixed and
// a hostile request cannot mint new metric names.
type stats struct {
	requests                 proxywasm.MetricCounter
	action, level, refusal   map[string]proxywasm.MetricCounter
	errs                     map[string]proxywasm.MetricCounter
	checked, unknown, uncite proxywasm.MetricCounter
	stream                   proxywasm.MetricCounter
	confidence, gateTime     proxywasm.MetricHistogram
}

func defineStats() *stats {
	s := &stats{
		requests:   proxywasm.DefineCounterMetric(MetricRequests),
		action:     counters(MetricActionPrefix, actions),
		level:      counters(MetricLevelPrefix, levels),
		refusal:    counters(MetricRefusalPrefix, refusals),
		errs:       counters(MetricErrorPrefix, errCodes),
		checked:    proxywasm.DefineCounterMetric(MetricAnswersChecked),
		unknown:    proxywasm.DefineCounterMetric(MetricAnswerUnknown),
		uncite:     proxywasm.DefineCounterMetric(MetricAnswerUncited),
		stream:     proxywasm.DefineCounterMetric(MetricAnswerStream),
		confidence: proxywasm.DefineHistogramMetric(MetricConfidenceBP),
		gateTime:   proxywasm.DefineHistogramMetric(MetricGateTimeUS),
	}
	return s
}

func counters(prefix string, names []string) map[string]proxywasm.MetricCounter {
	m := make(map[string]proxywasm.MetricCounter, len(names))
	for _, n := range names {
		m[n] = proxywasm.DefineCounterMetric(prefix + n)
	}
	return m
}

// inc increments m[key] when key is a known label value; unknown values are
// dropped rather than defining a metric on the hot path.
func inc(m map[string]proxywasm.MetricCounter, key string) {
	if c, ok := m[key]; ok {
		c.Increment(1)
	}
}
