package server

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The spans these tests read are the SDK's own, recorded in memory as the
// batch exporter would hand them to OTLP; internal/otlptest checks the same
// trace as an OpenTelemetry Collector receives it from a ctxgate serve
// process.

// callerTrace is the caller's trace context: W3C traceparent of a sampled
// span of trace 4bf9...4736.
const (
	callerTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpanID  = "00f067aa0ba902b7"
	callerParent  = "00-" + callerTraceID + "-" + callerSpanID + "-01"
)

// traced starts a server with an in-memory span recorder.
func traced(t *testing.T, opts Options) (*testServer, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(t.Context()) })
	opts.TracerProvider = tp
	return start(t, opts), exp
}

// waitSpans waits for n spans: a request's span ends after its response
// is written, so the client can be first.
func waitSpans(t *testing.T, exp *tracetest.InMemoryExporter, n int) tracetest.SpanStubs {
	t.Helper()
	eventually(t, strconv.Itoa(n)+" spans", func() bool { return len(exp.GetSpans()) >= n })
	spans := exp.GetSpans()
	if len(spans) != n {
		t.Fatalf("%d spans, want %d", len(spans), n)
	}
	return spans
}

// spanNamed returns the one span of that name among n.
func spanNamed(t *testing.T, exp *tracetest.InMemoryExporter, n int, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	var names []string
	for _, s := range waitSpans(t, exp, n) {
		names = append(names, s.Name)
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %q; spans: %q", len(found), name, names)
	}
	return found[0]
}

func attrsOf(s tracetest.SpanStub) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	for _, kv := range s.Attributes {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// wantAttrs checks attributes by their printed value (Emit: strings as
// they are, numbers and booleans in Go syntax, string slices as JSON).
func wantAttrs(t *testing.T, s tracetest.SpanStub, want map[string]string) {
	t.Helper()
	got := attrsOf(s)
	for k, v := range want {
		a, ok := got[k]
		switch {
		case v == "" && ok:
			t.Errorf("span %q: %s = %s, want none", s.Name, k, a.Emit())
		case v != "" && !ok:
			t.Errorf("span %q: no %s (want %s)", s.Name, k, v)
		case v != "" && a.Emit() != v:
			t.Errorf("span %q: %s = %s, want %s", s.Name, k, a.Emit(), v)
		}
	}
}

// TestTraceGate: a /v1/gate request is one server span in the caller's
// trace, carrying the decision the answer carries.
func TestTraceGate(t *testing.T) {
	cases := []struct{ policy, request string }{
		{"default", "inject"},
		{"default", "refuse_off_topic"},
	}
	for _, tc := range cases {
		t.Run(tc.request, func(t *testing.T) {
			s, exp := traced(t, Options{Policy: PolicySource{Path: tc.policy}})
			r := post(t, s.url+"/v1/gate", request(t, tc.policy, tc.request), "Traceparent", callerParent)
			d := mustDecision(t, r.body)
			span := spanNamed(t, exp, 1, "POST /v1/gate")
			if span.SpanKind != trace.SpanKindServer || span.SpanContext.TraceID().String() != callerTraceID ||
				span.Parent.SpanID().String() != callerSpanID || !span.Parent.IsRemote() {
				t.Fatalf("span %v in trace %s, parent %s: want a server span, child of the caller's %s", span.SpanKind,
					span.SpanContext.TraceID(), span.Parent.SpanID(), callerSpanID)
			}
			refusal := ""
			if d.Refusal != nil {
				refusal = d.Refusal.Type
			}
			wantAttrs(t, span, map[string]string{
				"ctxgate.action":            d.Action,
				"ctxgate.level":             d.Level,
				"ctxgate.band":              d.Band,
				"ctxgate.confidence":        strconv.FormatFloat(d.confidence(), 'g', -1, 64),
				"ctxgate.policy.name":       d.Policy.Name,
				"ctxgate.policy.version":    d.Policy.Version,
				"ctxgate.policy.sha256":     d.Policy.SHA256,
				"ctxgate.decision.id":       r.header.Get(HeaderDecisionID),
				"ctxgate.gap_event":         strconv.FormatBool(d.hasGap()),
				"ctxgate.refusal.type":      refusal,
				"http.request.method":       "POST",
				"http.route":                "/v1/gate",
				"http.response.status_code": "200",
			})
			if span.Status.Code == codes.Error {
				t.Fatalf("status %v", span.Status)
			}
		})
	}
}

// TestTraceGateway: a gated chat request is the gate's server span in the
// caller's trace, and the upstream call its child: a GenAI client span
// whose context is what the upstream receives as its traceparent.
func TestTraceGateway(t *testing.T) {
	up := newUpstream(t, "Open Settings, choose Security [S1].")
	s, exp := traced(t, Options{Upstream: up.ts.URL})
	body, _ := chatFor(t, request(t, "default", "inject"), false)
	r := post(t, s.url+"/v1/chat/completions", body, "Traceparent", callerParent, "Tracestate", "vendor=abc")
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	gate := spanNamed(t, exp, 2, "POST /v1/chat/completions")
	call := spanNamed(t, exp, 2, "chat test-model")
	if gate.SpanContext.TraceID().String() != callerTraceID || gate.Parent.SpanID().String() != callerSpanID {
		t.Fatalf("the gate's span is not the caller's child: trace %s parent %s", gate.SpanContext.TraceID(), gate.Parent.SpanID())
	}
	if call.SpanKind != trace.SpanKindClient || call.SpanContext.TraceID() != gate.SpanContext.TraceID() || call.Parent.SpanID() != gate.SpanContext.SpanID() {
		t.Fatalf("the upstream call is not the gate's child client span: kind %v parent %s", call.SpanKind, call.Parent.SpanID())
	}
	wantAttrs(t, gate, map[string]string{
		"ctxgate.action":              "inject",
		"ctxgate.decision.id":         r.header.Get(HeaderDecisionID),
		"ctxgate.answer_check":        "ok",
		"ctxgate.answer.soft_refusal": "false",
		"http.route":                  "/v1/chat/completions",
	})
	u, _ := url.Parse(up.ts.URL)
	wantAttrs(t, call, map[string]string{
		"gen_ai.operation.name":          "chat",
		"gen_ai.provider.name":           "openai",
		"gen_ai.system":                  "openai",
		"gen_ai.request.model":           "test-model",
		"gen_ai.request.temperature":     "0.2",
		"gen_ai.response.model":          "test-model",
		"gen_ai.response.id":             "chatcmpl-1",
		"gen_ai.response.finish_reasons": `["stop"]`,
		"gen_ai.usage.input_tokens":      "10",
		"gen_ai.usage.output_tokens":     "5",
		"openai.api.type":                "chat_completions",
		"server.address":                 u.Hostname(),
		"server.port":                    u.Port(),
		"http.response.status_code":      "200",
		"error.type":                     "",
	})
	// The upstream sits in the same trace, under the call's span; the
	// caller's tracestate goes along.
	_, hdr := up.last(t)
	if want := "00-" + callerTraceID + "-" + call.SpanContext.SpanID().String() + "-01"; hdr.Get("Traceparent") != want || hdr.Get("Tracestate") != "vendor=abc" {
		t.Fatalf("upstream traceparent %q tracestate %q, want %q", hdr.Get("Traceparent"), hdr.Get("Tracestate"), want)
	}
}

// TestTraceGatewayOutcomes: a refusal never calls the upstream (no call
// span); an upstream error, a stream and the Responses API each set what
// the conventions ask of them.
func TestTraceGatewayOutcomes(t *testing.T) {
	const chunks = "data: {\"id\":\"c-9\",\"model\":\"test-model-2024\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Open\"},\"finish_reason\":null}],\"usage\":null}\n\n" +
		"data: {\"id\":\"c-9\",\"model\":\"test-model-2024\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],\"usage\":null}\n\n" +
		"data: {\"id\":\"c-9\",\"model\":\"test-model-2024\",\"choices\":[],\"usage\":{\"prompt_tokens\":31,\"completion_tokens\":2,\"total_tokens\":33}}\n\ndata: [DONE]\n\n"
	const response = `{"id":"resp_1","object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"test-model-2024",` +
		`"output":[{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Open Settings [S1].","annotations":[]}]}],` +
		`"usage":{"input_tokens":40,"output_tokens":7,"total_tokens":47}}`
	cases := []struct {
		name, request, path string
		stream              bool
		handler             http.HandlerFunc
		body                func([]byte) []byte
		gate, call          map[string]string // "": no such span
		callError           bool
	}{{
		name: "refuse", request: "refuse_off_topic", path: "/v1/chat/completions",
		gate: map[string]string{"ctxgate.action": "refuse", "ctxgate.refusal.type": "hard", "http.response.status_code": "200"},
	}, {
		name: "upstream 503", request: "inject", path: "/v1/chat/completions",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(503)
			io.WriteString(w, `{"error":{"message":"overloaded"}}`)
		},
		gate:      map[string]string{"ctxgate.action": "inject", "http.response.status_code": "503", "error.type": "503"},
		call:      map[string]string{"error.type": "503", "http.response.status_code": "503", "gen_ai.response.model": ""},
		callError: true,
	}, {
		name: "stream", request: "inject", path: "/v1/chat/completions", stream: true,
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, chunks)
		},
		gate: map[string]string{"ctxgate.action": "inject", "ctxgate.answer_check": "skipped-stream"},
		call: map[string]string{"gen_ai.response.model": "test-model-2024", "gen_ai.response.id": "c-9", "gen_ai.response.finish_reasons": `["length"]`,
			"gen_ai.usage.input_tokens": "31", "gen_ai.usage.output_tokens": "2"},
	}, {
		name: "responses", request: "inject", path: "/v1/responses",
		body: func(chat []byte) []byte {
			return []byte(strings.Replace(strings.Replace(string(chat), `"messages"`, `"input"`, 1), `"temperature"`, `"max_output_tokens":64,"top_p":0.9,"temperature"`, 1))
		},
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, response)
		},
		gate: map[string]string{"ctxgate.action": "inject", "http.route": "/v1/responses"},
		call: map[string]string{"openai.api.type": "responses", "gen_ai.request.max_tokens": "64", "gen_ai.request.top_p": "0.9",
			"gen_ai.response.model": "test-model-2024", "gen_ai.response.id": "resp_1", "gen_ai.response.finish_reasons": `["max_output_tokens"]`,
			"gen_ai.usage.input_tokens": "40", "gen_ai.usage.output_tokens": "7"},
	}, {
		name: "not gated", path: "/v1/chat/completions",
		gate: map[string]string{"ctxgate.action": "skip", "ctxgate.decision.id": ""},
		call: map[string]string{"gen_ai.request.model": "m", "gen_ai.response.model": "test-model"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t, "Open Settings [S1].")
			up.handler = tc.handler
			s, exp := traced(t, Options{Upstream: up.ts.URL})
			body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
			if tc.request != "" {
				body, _ = chatFor(t, request(t, "default", tc.request), tc.stream)
			}
			if tc.body != nil {
				body = tc.body(body)
			}
			post(t, s.url+tc.path, body)
			n := 2 // the gate's and the call's
			if tc.call == nil {
				n = 1
			}
			gate := spanNamed(t, exp, n, "POST "+tc.path)
			wantAttrs(t, gate, tc.gate)
			if tc.call == nil {
				if up.calls.Load() != 0 {
					t.Fatal("a refusal called the upstream")
				}
				return
			}
			call := exp.GetSpans()[0] // ended first
			if !strings.HasPrefix(call.Name, "chat ") || call.Parent.SpanID() != gate.SpanContext.SpanID() {
				t.Fatalf("call span %q, parent %s", call.Name, call.Parent.SpanID())
			}
			wantAttrs(t, call, tc.call)
			if (call.Status.Code == codes.Error) != tc.callError {
				t.Fatalf("call status %v", call.Status)
			}
		})
	}
}

// TestTraceOff: without a tracer provider the caller's trace context goes
// upstream untouched, and nothing else does.
func TestTraceOff(t *testing.T) {
	up := newUpstream(t, "Open Settings [S1].")
	s := start(t, Options{Upstream: up.ts.URL})
	if s.trace != nil {
		t.Fatal("tracing is on without a provider")
	}
	body, _ := chatFor(t, request(t, "default", "inject"), false)
	post(t, s.url+"/v1/chat/completions", body, "Traceparent", callerParent, "Tracestate", "vendor=abc")
	_, hdr := up.last(t)
	if hdr.Get("Traceparent") != callerParent || hdr.Get("Tracestate") != "vendor=abc" {
		t.Fatalf("upstream traceparent %q tracestate %q, want the caller's", hdr.Get("Traceparent"), hdr.Get("Tracestate"))
	}
}

// TestTraceRoutes: probes are not traced; a pass-through is a span named
// by its method alone (its path is the client's to choose) whose context
// the upstream receives; an unknown method is _OTHER.
func TestTraceRoutes(t *testing.T) {
	up := newUpstream(t, "")
	up.handler = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"data":[]}`) }
	s, exp := traced(t, Options{Upstream: up.ts.URL})
	do(t, http.MethodGet, s.url+"/healthz", nil)
	do(t, http.MethodGet, s.url+"/metrics", nil)
	do(t, http.MethodGet, s.url+"/v1/models", nil, "Traceparent", callerParent)
	span := spanNamed(t, exp, 1, "GET") // the probes' requests made none
	wantAttrs(t, span, map[string]string{"url.path": "/v1/models", "http.route": "", "ctxgate.action": ""})
	_, hdr := up.last(t)
	if want := "00-" + callerTraceID + "-" + span.SpanContext.SpanID().String() + "-01"; hdr.Get("Traceparent") != want {
		t.Fatalf("upstream traceparent %q, want %q", hdr.Get("Traceparent"), want)
	}
	exp.Reset()
	do(t, "PROPFIND", s.url+"/v1/models", nil)
	spanNamed(t, exp, 1, "_OTHER")
	// A gated endpoint however spelled is named by its route.
	exp.Reset()
	post(t, s.url+"/v1//chat/./completions", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	spanNamed(t, exp, 2, "POST /v1/chat/completions")
}
