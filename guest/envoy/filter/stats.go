package filter

import "github.com/proxy-wasm/proxy-wasm-go-sdk/proxywasm"

// Metric names. Envoy keeps them in its "wasmcustom" stat namespace
// (wasmcustom.ctxgate.action.inject in /stats); /stats/prometheus strips the
// namespace and adds no envoy_ prefix (ctxgate_action_inject, ...), and the
// stats_tags of examples/envoy/envoy.yaml turn the last segment into a label
// (ctxgate_action{ctxgate_action="inject"}). docs/envoy.md lists them all.
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
	// names keeps the built metric names reachable for the plugin's life.
	// proxytest's host keys its metric table by a string that aliases the
	// guest's memory, so a name the guest's GC frees and reuses would
	// corrupt that table (seen with TinyGo). Holding them costs ~500 bytes.
	names []string
}

func defineStats() *stats {
	s := &stats{
		requests:   proxywasm.DefineCounterMetric(MetricRequests),
		checked:    proxywasm.DefineCounterMetric(MetricAnswersChecked),
		unknown:    proxywasm.DefineCounterMetric(MetricAnswerUnknown),
		uncite:     proxywasm.DefineCounterMetric(MetricAnswerUncited),
		stream:     proxywasm.DefineCounterMetric(MetricAnswerStream),
		confidence: proxywasm.DefineHistogramMetric(MetricConfidenceBP),
		gateTime:   proxywasm.DefineHistogramMetric(MetricGateTimeUS),
	}
	s.action = s.counters(MetricActionPrefix, actions)
	s.level = s.counters(MetricLevelPrefix, levels)
	s.refusal = s.counters(MetricRefusalPrefix, refusals)
	s.errs = s.counters(MetricErrorPrefix, errCodes)
	return s
}

func (s *stats) counters(prefix string, labels []string) map[string]proxywasm.MetricCounter {
	m := make(map[string]proxywasm.MetricCounter, len(labels))
	for _, l := range labels {
		name := prefix + l
		s.names = append(s.names, name)
		m[l] = proxywasm.DefineCounterMetric(name)
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
