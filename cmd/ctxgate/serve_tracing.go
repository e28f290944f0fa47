package main

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/ctxgate/ctxgate/host/server"
)

// startTracing builds the OTLP tracer provider the tracing: section and the
// OTEL_* environment ask for (nil: tracing is off) and sends the SDK's
// own errors (a collector that is down, a refused export) to the log.
func startTracing(ctx context.Context, c server.TracingConfig, log *slog.Logger) (*server.Tracing, error) {
	t, err := server.StartTracing(ctx, c, releaseVersion(), os.Getenv)
	if err != nil || t == nil {
		return nil, err
	}
	var limit rateLimited
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		if limit.allow(time.Now()) {
			log.Warn("tracing: the OpenTelemetry SDK reports an error (spans may be dropped)", "error", err.Error())
		}
	}))
	endpoint := t.Endpoint
	if endpoint == "" {
		endpoint = "from OTEL_EXPORTER_OTLP_ENDPOINT (or the exporter's default, localhost)"
	}
	log.Info("tracing: exporting OpenTelemetry traces over OTLP", "protocol", t.Protocol, "endpoint", endpoint)
	return t, nil
}

// stopTracing exports the spans still queued, for at most five seconds.
func stopTracing(t *server.Tracing, log *slog.Logger) {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		log.Warn("tracing: the last spans were not all exported", "error", err.Error())
	}
}

// rateLimited lets one log line through every ten seconds: an export fails
// every few seconds while the collector is down. The SDK reports from its
// own goroutines.
type rateLimited struct {
	mu   sync.Mutex
	next time.Time
}

func (r *rateLimited) allow(now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Before(r.next) {
		return false
	}
	r.next = now.Add(10 * time.Second)
	return true
}
