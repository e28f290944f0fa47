package server

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// OpenTelemetry tracing (docs/observability.md). With Options.TracerProvider
// set, every request but the probes (/healthz, /metrics) is a server span in
// the caller's trace (W3C traceparent), named "{method} {route}", and
// carries the gate's decision as ctxgate.* attributes; in gateway mode the
// upstream LLM call is its child, a client span named and attributed by the
// GenAI semantic conventions (tracing_genai.go), and the upstream receives
// that span's traceparent. Without a provider nothing here runs: no span,
// no context, no header is read or written, so a caller's traceparent goes
// upstream as it came.

// The ctxgate.* span attributes: the decision as the x-ctxgate-* headers
// and the decision log carry it.
const (
	attrAction         = attribute.Key("ctxgate.action")     // inject, caveat, fallback, refuse; skip or error when ungated
	attrLevel          = attribute.Key("ctxgate.level")      // the decision's level
	attrConfidence     = attribute.Key("ctxgate.confidence") // 0..1, as a double
	attrBand           = attribute.Key("ctxgate.band")
	attrPolicyName     = attribute.Key("ctxgate.policy.name")
	attrPolicyVersion  = attribute.Key("ctxgate.policy.version")
	attrPolicySHA256   = attribute.Key("ctxgate.policy.sha256")
	attrDecisionID     = attribute.Key("ctxgate.decision.id")
	attrRefusal        = attribute.Key("ctxgate.refusal.type")
	attrErrorCode      = attribute.Key("ctxgate.error.code") // the error answer's code (bad_field, limit, ...)
	attrAnswerCheck    = attribute.Key("ctxgate.answer_check")
	attrSoftRefusal    = attribute.Key("ctxgate.answer.soft_refusal")
	attrGapEvent       = attribute.Key("ctxgate.gap_event") // true: the decision logged a knowledge-gap event
	instrumentationLib = "github.com/ctxgate/ctxgate/host/server"
)

// tracing is a Server's tracer; nil when tracing is off.
type tracing struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	fields []string // the headers prop writes, removed before it injects
	// upstream: server.address and server.port of the upstream, and the
	// GenAI provider attributes, on every upstream LLM call span.
	upstream []attribute.KeyValue
	routes   map[string]string // route label -> path template (http.route); set once, by setRoutes
	once     sync.Once
}

func newTracing(opts *Options, upstream *url.URL) *tracing {
	if opts.TracerProvider == nil {
		return nil
	}
	prop := opts.Propagator
	if prop == nil {
		prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	t := &tracing{
		tracer: opts.TracerProvider.Tracer(instrumentationLib, trace.WithSchemaURL(semconv.SchemaURL)),
		prop:   prop,
		fields: prop.Fields(),
	}
	if upstream != nil {
		provider := opts.GenAIProvider
		if provider == "" {
			provider = "openai" // the API the gateway speaks
		}
		t.upstream = append(t.upstream, semconv.GenAIProviderNameKey.String(provider), attrGenAISystem.String(provider),
			semconv.ServerAddress(upstream.Hostname()))
		if p := upstreamPort(upstream); p > 0 {
			t.upstream = append(t.upstream, semconv.ServerPort(p))
		}
	}
	return t
}

func upstreamPort(u *url.URL) int {
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return p
	}
	if u.Scheme == "https" {
		return 443
	}
	return 80
}

// setRoutes learns the path template of each route label from the
// router's path -> label map (the same map whenever Handler is called).
func (t *tracing) setRoutes(routes map[string]string) {
	t.once.Do(func() {
		t.routes = make(map[string]string, len(routes))
		for path, label := range routes {
			t.routes[label] = path
		}
	})
}

// probes are the routes never traced: scraped and polled every few
// seconds, they would bury the requests worth reading.
func probe(route string) bool { return route == "healthz" || route == "metrics" }

// requestSpan is a traced request's server span, the route it was named
// by, and the decision it reports.
type requestSpan struct {
	span       trace.Span
	route      string
	decision   *decisionView
	decisionID string
}

// startRequest starts the request's server span as a child of the
// caller's trace context, if any, and returns the request carrying it.
func (t *tracing) startRequest(rec *recorder, r *http.Request) *http.Request {
	if probe(rec.route) {
		return r
	}
	ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	method := spanMethod(r.Method)
	ctx, span := t.tracer.Start(ctx, t.spanName(method, rec.route),
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(semconv.HTTPRequestMethodKey.String(method), semconv.URLPath(r.URL.Path), semconv.URLScheme("http")))
	rec.traced = &requestSpan{span: span, route: rec.route}
	return r.WithContext(ctx)
}

func (t *tracing) spanName(method, route string) string {
	if tpl := t.routes[route]; tpl != "" {
		return method + " " + tpl
	}
	return method
}

// spanMethod is the method as HTTP semantic conventions name it: a method
// they do not know is _OTHER, so that no client can mint span names.
func spanMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "_OTHER"
}

// endRequest sets the outcome and the decision on the server span and ends
// it.
func (t *tracing) endRequest(rec *recorder, r *http.Request, status int, aborted bool) {
	rs := rec.traced
	span := rs.span
	if !span.IsRecording() { // sampled out: nothing to say
		span.End()
		return
	}
	if rec.route != rs.route { // a gated endpoint reached by another spelling, a pass-through
		span.SetName(t.spanName(spanMethod(r.Method), rec.route))
	}
	attrs := make([]attribute.KeyValue, 0, 16)
	if tpl := t.routes[rec.route]; tpl != "" {
		attrs = append(attrs, semconv.HTTPRoute(tpl))
	}
	if status > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(status))
	}
	h := rec.Header()
	if d := rs.decision; d != nil {
		attrs = appendDecisionAttrs(attrs, d, rs.decisionID)
	} else if a := h.Get(HeaderAction); a != "" { // skip, or error: the gateway did not gate
		attrs = append(attrs, attrAction.String(a))
	}
	if rec.errCode != "" {
		attrs = append(attrs, attrErrorCode.String(rec.errCode))
	}
	if c := h.Get(HeaderAnswerCheck); c != "" {
		attrs = append(attrs, attrAnswerCheck.String(c))
		if v := h.Get(HeaderSoftRefusal); v != "" {
			attrs = append(attrs, attrSoftRefusal.Bool(v == "true"))
		}
	}
	// A server span is an error for a 5xx answer or a cut response, not
	// for the client's own mistakes (HTTP semantic conventions).
	switch {
	case aborted:
		attrs = append(attrs, semconv.ErrorTypeKey.String("aborted"))
		span.SetStatus(codes.Error, "the response was cut off")
	case status >= 500:
		e := rec.errCode
		if e == "" {
			e = strconv.Itoa(status)
		}
		attrs = append(attrs, semconv.ErrorTypeKey.String(e))
		span.SetStatus(codes.Error, "")
	}
	span.SetAttributes(attrs...)
	span.End()
}

func appendDecisionAttrs(attrs []attribute.KeyValue, d *decisionView, id string) []attribute.KeyValue {
	attrs = append(attrs,
		attrAction.String(d.Action),
		attrLevel.String(d.Level),
		attrConfidence.Float64(d.confidence()),
		attrBand.String(d.Band),
		attrPolicyName.String(d.Policy.Name),
		attrPolicyVersion.String(d.Policy.Version),
		attrPolicySHA256.String(d.Policy.SHA256),
		attrDecisionID.String(id),
		attrGapEvent.Bool(d.hasGap()),
	)
	if d.Refusal != nil && d.Refusal.Type != "" {
		attrs = append(attrs, attrRefusal.String(d.Refusal.Type))
	}
	return attrs
}

// noteDecision records the request's decision for its span, if it is
// traced (the headers and logs have their own paths).
func noteDecision(w http.ResponseWriter, d *decisionView, id string) {
	if rec, ok := w.(*recorder); ok && rec.traced != nil {
		rec.traced.decision, rec.traced.decisionID = d, id
	}
}

// inject writes ctx's trace context into an upstream request's headers,
// in place of whatever trace context the client sent: the upstream's spans
// are then children of the gateway's.
func (t *tracing) inject(ctx context.Context, h http.Header) {
	for _, f := range t.fields {
		h.Del(f)
	}
	t.prop.Inject(ctx, propagation.HeaderCarrier(h))
}
