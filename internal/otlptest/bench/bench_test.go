// Package bench measures what tracing costs ctxgate serve per request. It
// must not link the Collector: the Collector's pdata replaces gRPC's
// global "proto" codec in any process that links it, which would measure
// another exporter than ctxgate runs. The receiver runs as a process of
// its own (cmd/otlpreceiver), as a collector runs beside a server.
package bench

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ctxgate/ctxgate/host/server"
	"github.com/ctxgate/ctxgate/internal/otlptest/chatbody"
)

// The cost of tracing per request: the server's handler over the native
// core (what the server adds to a decision, as BenchmarkHandlerNative in
// host/server), without tracing and with it, exporting in batches over
// OTLP to the Collector's receiver in a process of its own. The time includes the export of every span (ForceFlush
// before the timer stops) and, on these two shared cores, the receiver's
// decoding competing for the CPU; the allocations are the server's alone.
// "sdk" creates and batches the spans and exports them nowhere (the SDK's
// own cost, without OTLP); "unsampled" is tracing on with the request
// sampled out (what sample_ratio saves on the others). spans/op is what the
// collector received.
//
//	cd internal/otlptest && go test ./bench -run - -bench Traced

// callerTraceparent puts every benchmarked request in a caller's sampled
// trace, as an instrumented application sends it.
const callerTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func BenchmarkGateTraced(b *testing.B) {
	req, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "requests", "default", "inject.json"))
	if err != nil {
		b.Fatal(err)
	}
	benchTraced(b, server.Options{Native: true}, "/v1/gate", req, "off", "unsampled", "sdk", "grpc", "http/protobuf")
}

// BenchmarkGatewayTraced: one gated chat request through the handler to a
// local upstream over loopback (two spans with tracing on: the gate's and
// the upstream call's).
func BenchmarkGatewayTraced(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, chatbody.Completion)
	}))
	b.Cleanup(up.Close)
	body, err := chatbody.Inject(filepath.Join("..", "..", ".."))
	if err != nil {
		b.Fatal(err)
	}
	benchTraced(b, server.Options{Native: true, Upstream: up.URL}, "/v1/chat/completions", body, "off", "grpc")
}

// benchTraced runs POST path with body through a server with opts, once
// per tracing subject.
func benchTraced(b *testing.B, opts server.Options, path string, body []byte, subjects ...string) {
	col := startRemoteCollector(b)
	for _, subject := range subjects {
		b.Run(subject, func(b *testing.B) {
			col.reset(b)
			tp := benchProvider(b, subject, col)
			h := benchServer(b, opts, tp).Handler()
			b.ReportAllocs()
			b.ResetTimer()
			// Not b.Loop, which stops the timer when the loop ends: the
			// spans still queued then are exported inside the timing.
			for range b.N {
				w := httptest.NewRecorder()
				r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
				r.Header.Set("Traceparent", callerTraceparent)
				h.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatal(w.Code, w.Body.String())
				}
			}
			flush(b, tp, col)
		})
	}
}

// benchProvider is nil for "off", else a batching provider exporting to
// col over protocol, sampling everything its callers sample.
func benchProvider(b *testing.B, protocol string, col *remoteCollector) *sdktrace.TracerProvider {
	b.Helper()
	var exp sdktrace.SpanExporter
	var err error
	switch protocol {
	case "off":
		return nil
	case "unsampled":
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
		b.Cleanup(func() { tp.Shutdown(context.Background()) })
		return tp
	case "sdk":
		exp = tracetest.NewNoopExporter()
	case "grpc":
		exp, err = otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpointURL("http://"+col.GRPC))
	default:
		exp, err = otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL("http://"+col.HTTP+"/v1/traces"))
	}
	if err != nil {
		b.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	b.Cleanup(func() { tp.Shutdown(context.Background()) })
	return tp
}

func benchServer(b *testing.B, opts server.Options, tp *sdktrace.TracerProvider) *server.Server {
	b.Helper()
	opts.ReloadPoll = -1
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if tp != nil {
		opts.TracerProvider = tp
	}
	s, err := server.New(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Shutdown(context.Background()) })
	return s
}

// flush exports what is still queued, inside the timing, and reports the
// spans the collector received per request.
func flush(b *testing.B, tp *sdktrace.TracerProvider, col *remoteCollector) {
	if tp == nil {
		return
	}
	if err := tp.ForceFlush(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(col.spanCount(b))/float64(b.N), "spans/op")
}
