package server

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ctxgate/ctxgate/host"
	"github.com/ctxgate/ctxgate/internal/testmodules"
)

// Benchmarks split the cost of one /v1/gate decision: the gate call alone
// (Wasm and native), the handler around it (no network), and the handler
// through a real loopback HTTP connection. Compare them as ratios from one
// run; bench/load measures throughput under concurrency.

func benchRequest(b *testing.B) []byte { return request(b, "default", "inject") }

func BenchmarkEvaluateWasm(b *testing.B) {
	g, err := host.New(context.Background(), host.Options{Wasm: testmodules.Bytes(b, host.ModuleTinyGo), PoolSize: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close(context.Background())
	req := benchRequest(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Evaluate(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvaluateNative(b *testing.B) {
	n, err := host.NewNative(nil)
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := n.Evaluate(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHandler(b *testing.B) {
	s := start(b, Options{PoolSize: 1})
	h := s.Handler()
	req := benchRequest(b)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/gate", bytes.NewReader(req)))
		if w.Code != 200 {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}

func BenchmarkLoopbackHTTP(b *testing.B) {
	s := start(b, Options{PoolSize: 1})
	req := benchRequest(b)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := http.Post(s.url+"/v1/gate", "application/json", bytes.NewReader(req))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}

// The handler over the native core: what the server itself adds per
// decision (body read, decision parse, metrics, id, record).
func BenchmarkHandlerNative(b *testing.B) {
	s := start(b, Options{Native: true})
	h := s.Handler()
	req := benchRequest(b)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/gate", bytes.NewReader(req)))
		if w.Code != 200 {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}
