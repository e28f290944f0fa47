package otlptest

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// collector is the OpenTelemetry Collector's own OTLP receiver (the code
// the otelcol binaries run), listening on 127.0.0.1 over gRPC and HTTP and
// keeping what it receives in a sink.
type collector struct {
	grpc, http string // host:port
	sink       *consumertest.TracesSink
}

func startCollector(tb testing.TB) *collector {
	tb.Helper()
	c, stop, err := newCollector()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	return c
}

func newCollector() (*collector, func(), error) {
	grpcAddr, err := freeAddr()
	if err != nil {
		return nil, nil, err
	}
	httpAddr, err := freeAddr()
	if err != nil {
		return nil, nil, err
	}
	c := &collector{grpc: grpcAddr, http: httpAddr, sink: new(consumertest.TracesSink)}
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = c.grpc
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = c.http
	r, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, c.sink)
	if err != nil {
		return nil, nil, err
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		return nil, nil, err
	}
	return c, func() { r.Shutdown(context.Background()) }, nil
}

// freeAddr is a 127.0.0.1 port nothing listens on (the receiver takes an
// address, not a listener).
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// receivedSpan is a span as the collector received it, with its resource.
type receivedSpan struct {
	ptrace.Span
	resource pcommon.Map
}

// waitSpans waits until the collector has received n spans and returns
// them by name.
func (c *collector) waitSpans(tb testing.TB, n int) map[string]receivedSpan {
	tb.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for c.sink.SpanCount() < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	spans := map[string]receivedSpan{}
	var names []string
	for _, td := range c.sink.AllTraces() {
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
