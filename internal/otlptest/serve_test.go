package otlptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/ctxgate/ctxgate/internal/otlptest/chatbody"
)

// TestGatewayTraceInCollector is issue 27's "done when": one gateway
// request, as the Collector receives it, is three spans of one trace: the
// caller's own (it sends traceparent), ctxgate's server span with the
// decision, and under it the upstream LLM call named and attributed by the
// GenAI conventions; the upstream received that call's traceparent. The
// server is a real `ctxgate serve` process, configured once by flags
// (gRPC) and once by the OTEL_* environment (HTTP), in front of a local
// OpenAI-compatible upstream.
func TestGatewayTraceInCollector(t *testing.T) {
	bin := ctxgateBinary(t)
	col := startCollector(t)
	up := newUpstream(t)
	cases := []struct {
		protocol string
		args     []string
		env      []string
	}{
		{protocol: "grpc", args: []string{"--tracing", "--tracing-protocol", "grpc", "--tracing-endpoint", "http://" + col.GRPC}},
		{protocol: "http/protobuf", env: []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
			"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + col.HTTP, "OTEL_SERVICE_NAME=ctxgate-eu", "OTEL_RESOURCE_ATTRIBUTES=k8s.pod.name=ctxgate-0"}},
	}
	for _, tc := range cases {
		t.Run(tc.protocol, func(t *testing.T) {
			col.Sink.Reset()
			srv := startServe(t, bin, up.URL, tc.args, tc.env)

			// The caller: an application span, exported to the same
			// collector over the same protocol, whose context the
			// request carries.
			caller := callerProvider(t, tc.protocol, col)
			ctx, span := caller.Tracer("rag-app").Start(context.Background(), "answer question", trace.WithSpanKind(trace.SpanKindClient))
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv+"/v1/chat/completions", bytes.NewReader(chatBody(t)))
			if err != nil {
				t.Fatal(err)
			}
			propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			span.End()
			if resp.StatusCode != 200 || resp.Header.Get("X-Ctxgate-Action") != "inject" {
				t.Fatalf("status %d action %q", resp.StatusCode, resp.Header.Get("X-Ctxgate-Action"))
			}
			caller.Shutdown(context.Background())

			spans := waitSpans(t, col, 3)
			app, gate, call := spans["answer question"], spans["POST /v1/chat/completions"], spans["chat "+chatbody.Model]
			for name, s := range map[string]receivedSpan{"caller": app, "gate": gate, "upstream call": call} {
				if s.Span == (ptrace.Span{}) {
					t.Fatalf("no %s span among %d", name, len(spans))
				}
			}
			// One trace; the caller's span is the gate's parent, the
			// gate's span the call's.
			if gate.TraceID() != app.TraceID() || call.TraceID() != app.TraceID() {
				t.Fatalf("trace ids: caller %s gate %s call %s", app.TraceID(), gate.TraceID(), call.TraceID())
			}
			if gate.ParentSpanID() != app.SpanID() || call.ParentSpanID() != gate.SpanID() {
				t.Fatalf("links: gate's parent %s (caller %s), call's parent %s (gate %s)", gate.ParentSpanID(), app.SpanID(), call.ParentSpanID(), gate.SpanID())
			}
			if gate.Kind() != ptrace.SpanKindServer || call.Kind() != ptrace.SpanKindClient {
				t.Fatalf("kinds: gate %v, call %v", gate.Kind(), call.Kind())
			}
			if want := "00-" + app.TraceID().String() + "-" + call.SpanID().String() + "-01"; up.traceparent() != want {
				t.Fatalf("the upstream received traceparent %q, want %q", up.traceparent(), want)
			}

			service := "ctxgate"
			if tc.env != nil {
				service = "ctxgate-eu"
				if attr(gate.resource, "k8s.pod.name") != "ctxgate-0" {
					t.Errorf("OTEL_RESOURCE_ATTRIBUTES not applied: %v", gate.resource.AsRaw())
				}
			}
			if attr(gate.resource, "service.name") != service || attr(app.resource, "service.name") != "rag-app" {
				t.Errorf("services: gate %q, caller %q", attr(gate.resource, "service.name"), attr(app.resource, "service.name"))
			}
			decision := decisionOf(t, resp.Header)
			for k, want := range map[string]string{
				"ctxgate.action":            "inject",
				"ctxgate.level":             decision["level"],
				"ctxgate.confidence":        decision["confidence"],
				"ctxgate.band":              decision["band"],
				"ctxgate.policy.name":       "default",
				"ctxgate.policy.version":    decision["version"],
				"ctxgate.policy.sha256":     decision["sha256"],
				"ctxgate.decision.id":       resp.Header.Get("X-Ctxgate-Decision-Id"),
				"ctxgate.answer_check":      "ok",
				"http.route":                "/v1/chat/completions",
				"http.response.status_code": "200",
			} {
				if got := attr(gate.Attributes(), k); got != want || want == "" {
					t.Errorf("gate span: %s = %q, want %q", k, got, want)
				}
			}
			for k, want := range map[string]string{
				"gen_ai.operation.name":          "chat",
				"gen_ai.provider.name":           "openai",
				"gen_ai.request.model":           "gpt-4o-mini",
				"gen_ai.request.max_tokens":      "200",
				"gen_ai.response.model":          "gpt-4o-mini-2024-07-18",
				"gen_ai.response.id":             "chatcmpl-otlp",
				"gen_ai.response.finish_reasons": `["stop"]`,
				"gen_ai.usage.input_tokens":      "812",
				"gen_ai.usage.output_tokens":     "17",
				"server.address":                 "127.0.0.1",
				"server.port":                    up.port,
			} {
				if got := attr(call.Attributes(), k); got != want {
					t.Errorf("upstream call span: %s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

// decisionOf is the decision the gateway reported in its headers, and what
// /v1/gate says about the same request's band and policy: the gateway's
// answer carries level and confidence, the policy label name@version.
func decisionOf(t *testing.T, h http.Header) map[string]string {
	t.Helper()
	var d struct {
		Level, Band string
		Confidence  json.Number
		Policy      struct{ Name, Version, SHA256 string }
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "decisions", "default", "inject.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if h.Get("X-Ctxgate-Level") != d.Level || h.Get("X-Ctxgate-Confidence") != d.Confidence.String() {
		t.Fatalf("the gateway decided %s/%s, the golden decision is %s/%s", h.Get("X-Ctxgate-Level"), h.Get("X-Ctxgate-Confidence"), d.Level, d.Confidence)
	}
	return map[string]string{"level": d.Level, "confidence": d.Confidence.String(), "band": d.Band, "version": d.Policy.Version, "sha256": d.Policy.SHA256}
}

func chatBody(t *testing.T) []byte {
	t.Helper()
	b, err := chatbody.Inject(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// upstream is a local OpenAI-compatible server: it answers every chat
// request with one completion and its usage, and keeps the traceparent it
// received.
type upstream struct {
	*httptest.Server
	port string
	mu   sync.Mutex
	tp   string
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		u.mu.Lock()
		u.tp = r.Header.Get("Traceparent")
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, chatbody.Completion)
	}))
	t.Cleanup(u.Close)
	u.port = u.URL[strings.LastIndexByte(u.URL, ':')+1:]
	return u
}

func (u *upstream) traceparent() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.tp
}

// callerProvider is the application's tracer provider, exporting to the
// collector over protocol.
func callerProvider(t *testing.T, protocol string, col *Collector) *sdktrace.TracerProvider {
	t.Helper()
	var exp *otlptrace.Exporter
	var err error
	if protocol == "grpc" {
		exp, err = otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpointURL("http://"+col.GRPC))
	} else {
		exp, err = otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL("http://"+col.HTTP+"/v1/traces"))
	}
	if err != nil {
		t.Fatal(err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("rag-app"))))
}

// ctxgateBinary is the ctxgate CLI: $CTXGATE_BIN, or built from the main
// module (the go build cache makes that quick after `make build`).
func ctxgateBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("CTXGATE_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "ctxgate")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/ctxgate")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/ctxgate: %v\n%s", err, out)
	}
	return bin
}

// startServe runs `ctxgate serve` in gateway mode on a free port and
// returns its base URL. The test's end stops it with SIGTERM, which
// exports its last spans; OTEL_BSP_SCHEDULE_DELAY makes it export sooner
// anyway.
func startServe(t *testing.T, bin, upstream string, args, env []string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--upstream", upstream, "--access-log", "off", "--reload-poll", "0"}, args...)...)
	cmd.Env = append(cleanEnv(), append(env, "OTEL_BSP_SCHEDULE_DELAY=100")...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("ctxgate serve's log:\n%s", stderr.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	const prefix = "ctxgate serve: listening on "
	if err != nil || !strings.HasPrefix(line, prefix) {
		t.Fatalf("ctxgate serve did not start (%v): %q\n%s", err, line, stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	return strings.TrimSpace(strings.TrimPrefix(line, prefix))
}

// cleanEnv is the test's environment without OTEL_* variables, so that
// only what a case sets configures the server.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return env
}
