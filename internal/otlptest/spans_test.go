package otlptest

import (
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func startCollector(tb testing.TB) *Collector {
	tb.Helper()
	c, stop, err := NewCollector()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	return c
}

// receivedSpan is a span as the collector received it, with its resource.
type receivedSpan struct {
	ptrace.Span
	resource pcommon.Map
}

// waitSpans waits until the collector has received n spans and returns
// them by name.
func waitSpans(tb testing.TB, c *Collector, n int) map[string]receivedSpan {
	tb.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for c.Sink.SpanCount() < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	spans := map[string]receivedSpan{}
	var names []string
	for _, td := range c.Sink.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					s := ss.Spans().At(k)
					spans[s.Name()] = receivedSpan{s, rs.Resource().Attributes()}
					names = append(names, s.Name())
				}
			}
		}
	}
	if len(names) != n {
		tb.Fatalf("the collector received %d spans %q, want %d", len(names), names, n)
	}
	return spans
}

// attr is a span attribute as text ("" when absent): strings as they are,
// numbers and booleans as JSON writes them, slices as JSON.
func attr(m pcommon.Map, key string) string {
	v, ok := m.Get(key)
	if !ok {
		return ""
	}
	if v.Type() == pcommon.ValueTypeDouble {
		return strconv.FormatFloat(v.Double(), 'g', -1, 64)
	}
	return v.AsString()
}
