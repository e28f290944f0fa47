package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/ctxgate/ctxgate/gate/chat"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// The upstream LLM call of a gated endpoint, as the OpenTelemetry GenAI
// semantic conventions name it: a client span "chat {gen_ai.request.model}"
// with gen_ai.operation.name chat, gen_ai.provider.name (and the older
// gen_ai.system, which backends predating semconv 1.37 read), the request's
// model and parameters from the body sent upstream, and from the answer
// (JSON, or the events of a stream) the response model and id, the finish
// reasons and the token usage when the upstream reports it.

// attrGenAISystem is gen_ai.provider.name's name before semconv 1.37.
const attrGenAISystem = attribute.Key("gen_ai.system")

// chatSpan is one upstream LLM call's span; nil when tracing is off, and
// every method is then a no-op.
type chatSpan struct {
	span      trace.Span
	ctx       context.Context
	recording bool
	answer    genAIAnswer
	body      *upstreamBody // the answer being relayed: a read error ends the span as an error
	failed    bool
}

// startChat starts the span of x's upstream call, sending body.
func (t *tracing) startChat(r *http.Request, x *exchange, body []byte) *chatSpan {
	if t == nil {
		return nil
	}
	req := readGenAIRequest(body)
	name := "chat"
	if req.model != "" {
		name += " " + req.model
	}
	attrs := make([]attribute.KeyValue, 0, 12)
	attrs = append(attrs, semconv.GenAIOperationNameChat)
	attrs = append(attrs, t.upstream...)
	attrs = append(attrs, semconv.OpenAIAPITypeKey.String(x.api.route))
	attrs = req.appendAttrs(attrs)
	ctx, span := t.tracer.Start(r.Context(), name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return &chatSpan{span: span, ctx: ctx, recording: span.IsRecording()}
}

// context is the context the upstream request carries: the span's, or
// r's when there is none.
func (c *chatSpan) context(r *http.Request) context.Context {
	if c == nil {
		return r.Context()
	}
	return c.ctx
}

// status records the upstream's answer status.
func (c *chatSpan) status(code int) {
	if c == nil {
		return
	}
	c.span.SetAttributes(semconv.HTTPResponseStatusCode(code))
	if code >= 400 {
		c.fail(strconv.Itoa(code), "")
	}
}

// fail marks the call failed with error.type kind.
func (c *chatSpan) fail(kind, msg string) {
	if c == nil || c.failed {
		return
	}
	c.failed = true
	c.span.SetAttributes(semconv.ErrorTypeKey.String(kind))
	c.span.SetStatus(codes.Error, msg)
}

// readAnswer reads the GenAI response attributes from a JSON answer.
func (c *chatSpan) readAnswer(root *jsonx.Value) {
	if c != nil && c.recording {
		c.answer.read(root)
	}
}

// observe wraps a stream editor so the span reads each event too.
func (c *chatSpan) observe(ed streamEditor) streamEditor {
	if c == nil || !c.recording || ed == nil {
		return ed
	}
	return &observedStream{streamEditor: ed, c: c}
}

func (c *chatSpan) end() {
	if c == nil {
		return
	}
	if c.body != nil && c.body.failed != nil {
		kind := "upstream_broken"
		if e := upstreamFailure(c.body.failed); e.Code == codeUpstreamTimeout {
			kind = codeUpstreamTimeout
		}
		c.fail(kind, c.body.failed.Error())
	}
	if c.recording {
		c.span.SetAttributes(c.answer.attrs()...)
	}
	c.span.End()
}

// observedStream reads each complete event of a stream for the span before
// its editor edits it.
type observedStream struct {
	streamEditor
	c *chatSpan
}

func (o *observedStream) event(dst, ev []byte) ([]byte, error) {
	if data, ok := eventData(ev); ok && len(data) > 0 && data[0] == '{' {
		if root, err := jsonx.Parse(data, chat.MaxDepth); err == nil {
			o.c.answer.read(&root)
		}
	}
	return o.streamEditor.event(dst, ev)
}

// genAIRequest is what the span says about the request sent upstream.
type genAIRequest struct {
	model                   string
	maxTokens               int64
	temperature, topP       float64
	hasTemperature, hasTopP bool
}

// readGenAIRequest reads the model and sampling parameters of a chat
// completions or Responses API body (its top-level members only).
func readGenAIRequest(body []byte) genAIRequest {
	var g genAIRequest
	chat.EachMember(body, func(name, value []byte) {
		switch memberName(name) {
		case "model":
			if v, err := jsonx.Parse(value, 1); err == nil && v.Kind() == jsonx.String {
				g.model = v.Str()
			}
		case "max_tokens", "max_completion_tokens", "max_output_tokens":
			if n, err := strconv.ParseInt(string(value), 10, 64); err == nil {
				g.maxTokens = n
			}
		case "temperature":
			g.temperature, g.hasTemperature = number(value)
		case "top_p":
			g.topP, g.hasTopP = number(value)
		}
	})
	return g
}

func number(raw []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil
}

func (g *genAIRequest) appendAttrs(attrs []attribute.KeyValue) []attribute.KeyValue {
	if g.model != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(g.model))
	}
	if g.maxTokens > 0 {
		attrs = append(attrs, semconv.GenAIRequestMaxTokens(int(g.maxTokens)))
	}
	if g.hasTemperature {
		attrs = append(attrs, semconv.GenAIRequestTemperature(g.temperature))
	}
	if g.hasTopP {
		attrs = append(attrs, semconv.GenAIRequestTopP(g.topP))
	}
	return attrs
}

// genAIAnswer gathers the response attributes from a JSON answer or from
// the events of a stream: chat completions (and their chunks) and the
// Responses API (the response object, or an event carrying it).
type genAIAnswer struct {
	model, id     string
	finish        []string
	input, output int64
	hasUsage      bool
}

func (a *genAIAnswer) read(root *jsonx.Value) {
	if r := root.Get("response"); r.Kind() == jsonx.Object { // response.created, response.completed, ...
		root = r
	}
	if v := root.Get("model"); v.Kind() == jsonx.String && v.Str() != "" {
		a.model = strings.Clone(v.Str())
	}
	if v := root.Get("id"); v.Kind() == jsonx.String && v.Str() != "" && a.id == "" {
		a.id = strings.Clone(v.Str())
	}
	choices := root.Get("choices")
	for i := 0; i < choices.Len(); i++ {
		if f := choices.Index(i).Get("finish_reason"); f.Kind() == jsonx.String {
			a.finish = append(a.finish, strings.Clone(f.Str()))
		}
	}
	if st := root.Get("status"); st.Kind() == jsonx.String {
		switch st.Str() { // a Responses API answer's end
		case "completed":
			a.finish = append(a.finish[:0], "stop")
		case "incomplete":
			reason := root.Get("incomplete_details").Get("reason").Str()
			if reason == "" {
				reason = "incomplete"
			}
			a.finish = append(a.finish[:0], strings.Clone(reason))
		}
	}
	if u := root.Get("usage"); u.Kind() == jsonx.Object {
		in, out := u.Get("prompt_tokens"), u.Get("completion_tokens")
		if in == nil {
			in, out = u.Get("input_tokens"), u.Get("output_tokens")
		}
		if in.Kind() == jsonx.Number || out.Kind() == jsonx.Number {
			a.input, a.output, a.hasUsage = int64(in.Float()), int64(out.Float()), true
		}
	}
}

func (a *genAIAnswer) attrs() []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 5)
	if a.model != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(a.model))
	}
	if a.id != "" {
		attrs = append(attrs, semconv.GenAIResponseID(a.id))
	}
	if len(a.finish) > 0 {
		attrs = append(attrs, semconv.GenAIResponseFinishReasons(a.finish...))
	}
	if a.hasUsage {
		attrs = append(attrs, semconv.GenAIUsageInputTokens(int(a.input)), semconv.GenAIUsageOutputTokens(int(a.output)))
	}
	return attrs
}
