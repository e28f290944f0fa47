package server

import (
	"bytes"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/chat"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// gatedAPI is what differs between the OpenAI endpoints the gate gates:
// chat completions (chatbody.go) and the Responses API (responses.go).
type gatedAPI struct {
	route string // chat_completions, responses: metric label and access log
	parse func(body []byte, docsPath, queryPath []string) (*chat.Chat, error)
	// answer is the text the answer check reads in a JSON answer.
	answer func(root *jsonx.Value) (string, bool)
	// edited writes a JSON answer with the caveat in its text and the
	// sufficiency member.
	edited func(root *jsonx.Value, mode CaveatDelivery, caveat string, d *decisionView) []byte
	// stream edits a gated stream (caveat, sufficiency on the final event).
	stream func(d *decisionView, mode CaveatDelivery, caveat string) streamEditor
	// refuse answers a hard refusal locally, as JSON or as a stream.
	refuse func(s *Server, w http.ResponseWriter, c *chat.Chat, d *decisionView)
}

// handleGated: POST /v1/chat/completions and POST /v1/responses in gateway
// mode. The request's retrieved documents are gated, then: inject/caveat
// rewrite the conversation (a system message with the constraint
// instructions and the <sources> block, documents removed), fallback sends
// the minimal prompt, refuse answers locally without calling the upstream.
// The upstream's JSON answer gets the answer check (soft refusal,
// citations), the caveat and the sufficient-context document's "sufficiency" object; a stream is
// relayed as it arrives, with the caveat in its text and the sufficiency
// object on its final event.
func (s *Server) handleGated(api *gatedAPI) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		setRoute(w, api.route)
		if s.upstream == nil {
			s.failGateway(w, newAPIError(404, codeNoUpstream, "", "gateway mode is off: start the server with --upstream URL"))
			return
		}
		body, held, e := s.readHeld(w, r, s.opts.MaxBodyBytes, tooLarge)
		if e != nil {
			s.failGateway(w, e)
			return
		}
		// The body stays counted until the upstream has read the one sent
		// in its place (releasingBody), or the handler ends.
		defer held.release()
		x := &exchange{api: api, held: held}
		if s.opts.GatewayOff {
			out, ok := stripRetrieval(body, s.opts.DocumentsPath)
			if !ok {
				s.failGateway(w, unstrippable)
				return
			}
			s.forwardUngated(w, r, x, out)
			return
		}
		c, err := api.parse(body, s.opts.DocumentsPath, s.opts.QueryPath)
		if err == chat.ErrNotGated {
			s.forwardUngated(w, r, x, body)
			return
		}
		if err != nil {
			s.gateFailed(w, r, x, body, fromGateError(err))
			return
		}
		_, d, e := s.decide(r, c.GateRequest(nil), true)
		if e != nil {
			s.gateFailed(w, r, x, body, renameField(c, e))
			return
		}
		id := s.newID()
		s.remember(id, c.QueryText(), c.AppendQueryEmbedding(nil), d)
		noteDecision(w, d, id)
		s.metrics.gateway.WithLabelValues(api.route, d.Action).Inc()

		if gate.Action(d.Action) == gate.ActionRefuse {
			setDecisionHeaders(w.Header(), d, id)
			api.refuse(s, w, c, d)
			return
		}
		out, err := s.upstreamBody(c, d)
		if err != nil {
			s.gateFailed(w, r, x, body, fromGateError(err))
			return
		}
		x.d, x.id, x.tags, x.query, x.stream = d, id, d.tags(), c.QueryText(), c.Stream()
		x.check = gate.Action(d.Action) != gate.ActionFallback && !s.opts.NoAnswerCheck
		s.forward(w, r, out, x)
	}
}

// renameField gives a gate error the body's field names (documents[2]...,
// messages[1].content) instead of the spliced gate request's.
func renameField(c *chat.Chat, e *apiError) *apiError {
	if e.Field == "" {
		return e
	}
	ge := c.UserField(&gate.Error{Code: e.Code, Field: e.Field, Message: e.Message}).(*gate.Error)
	return newAPIError(e.Status, ge.Code, ge.Field, ge.Message)
}

// refusalMessage is the decision's refusal line.
func refusalMessage(d *decisionView) string {
	if d.Refusal != nil {
		return d.Refusal.Message
	}
	return ""
}

// gateFailed handles a request the gate could not decide: fail open sends
// the original body upstream without its retrieved documents (an OpenAI
// API rejects the unknown member), fail closed answers the error, as does
// fail open for a body whose documents cannot be removed. Either way the
// client sees x-ctxgate-action: error and the code.
func (s *Server) gateFailed(w http.ResponseWriter, r *http.Request, x *exchange, body []byte, e *apiError) {
	s.metrics.gateway.WithLabelValues(x.api.route, "error").Inc()
	w.Header().Set(HeaderAction, "error")
	w.Header().Set(HeaderError, e.Code)
	if s.opts.FailOpen && e.Code != codeUnavailable {
		if out, ok := stripRetrieval(body, s.opts.DocumentsPath); ok {
			s.metrics.errors.WithLabelValues(e.Code).Inc()
			s.log.Warn("gateway: request passed through ungated (fail_open)", "code", e.Code, "field", e.Field, "error", e.Message)
			x.ungated, x.errCode, x.stream = "error", e.Code, asksStream(out)
			s.forward(w, r, out, x)
			return
		}
	}
	s.failGateway(w, e)
}

// unstrippable answers a body whose documents cannot be removed, where it
// would otherwise go upstream ungated.
var unstrippable = newAPIError(400, gate.CodeBadJSON, "", "the request body is not a JSON object the gateway can read, so its documents cannot be removed; it is not forwarded")

// forwardUngated sends a body the gate does not decide upstream: one
// without documents, or any while gating is off.
func (s *Server) forwardUngated(w http.ResponseWriter, r *http.Request, x *exchange, body []byte) {
	s.metrics.gateway.WithLabelValues(x.api.route, "skip").Inc()
	x.ungated, x.stream = "skip", asksStream(body)
	s.forward(w, r, body, x)
}

// asksStream reports whether a body asks for a stream ("stream": true).
func asksStream(body []byte) bool {
	stream := false
	chat.EachMember(body, func(name, value []byte) {
		if memberName(name) == "stream" {
			stream = string(value) == "true"
		}
	})
	return stream
}

// exchange is what the response path needs to know about the request.
type exchange struct {
	api   *gatedAPI
	held  *heldBody     // the request body's share of the in-flight budget
	d     *decisionView // nil when ungated
	id    string
	check bool     // run the answer check on a JSON answer
	tags  []string // the S# tags the prompt offered
	query string
	// stream: the client asked for a stream, so it reads the answer as
	// events whatever its Content-Type says (the SDKs do).
	stream bool

	ungated, errCode string // "skip" or "error" when d is nil

	span *chatSpan // the upstream call's span; nil when tracing is off
}

func (x *exchange) setHeaders(h http.Header) {
	if x.d != nil {
		setDecisionHeaders(h, x.d, x.id)
		return
	}
	h.Set(HeaderAction, x.ungated)
	if x.errCode != "" {
		h.Set(HeaderError, x.errCode)
	}
}

// forward sends a gated (or ungated) body upstream and relays the answer.
// The upstream's time is bounded at every step: upstream_timeout until its
// headers, upstream_idle_timeout between reads of its body, and
// write_timeout for a whole answer that is not a stream.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, body []byte, x *exchange) {
	deadline := time.Now().Add(s.opts.WriteTimeout)
	x.span = s.trace.startChat(r, x, body) // nil when tracing is off
	defer x.span.end()
	// The transport negotiates gzip and decompresses: the answer check
	// and the caveat read the JSON.
	resp, cancel, ok := s.roundTrip(w, r, upstreamCall{route: x.api.route, method: http.MethodPost,
		body: &releasingBody{b: body, held: x.held}, length: int64(len(body)), headers: x.setHeaders, span: x.span})
	x.held.release() // sent, or never to be
	if !ok {
		return
	}
	defer cancel()
	h := w.Header()
	copyHeaders(h, resp.Header)
	stripGateHeaders(h)
	x.setHeaders(h)
	ok = resp.StatusCode == http.StatusOK
	// A client that asked for a stream reads events whatever the
	// Content-Type says; one that did not reads JSON.
	stream := isEventStream(resp.Header.Get("Content-Type")) || (ok && x.stream)
	if stream {
		deadline = time.Time{} // a stream moves the write deadline on with every event
	}
	ub := newUpstreamBody(resp.Body, cancel, s.opts.UpstreamIdleTimeout, deadline)
	defer ub.Close()
	if x.span != nil {
		x.span.body = ub
	}
	switch {
	case stream:
		var ed streamEditor
		switch {
		case !ok:
		case x.d != nil:
			ed = x.api.stream(x.d, s.opts.CaveatDelivery, s.caveatText(x.d))
		default:
			ed = stripStream{}
		}
		if x.check {
			h.Set(HeaderAnswerCheck, "skipped-stream")
			s.metrics.answerChecks.WithLabelValues("skipped_stream").Inc()
		}
		w.WriteHeader(resp.StatusCode)
		s.relayStream(w, r, ub, x.span.observe(ed))
	case ok:
		s.relayChecked(w, r, ub, resp.ContentLength, x)
	default:
		s.relayBody(w, r, resp.StatusCode, nil, ub, false)
	}
}

// isEventStream reports whether a Content-Type is text/event-stream, in
// any case and with any parameters.
func isEventStream(ctype string) bool {
	mt, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		mt, _, _ = strings.Cut(strings.ToLower(strings.TrimSpace(ctype)), ";")
	}
	return mt == "text/event-stream"
}

// Answers a gated exchange does not relay: the gate could not add its
// caveat and sufficiency object to them, nor remove the upstream's own.
var (
	errAnswerOversize   = answerError("the upstream's answer is over max_response_bytes, so the gate could not add its caveat and sufficiency to it; raise limits.max_response_bytes")
	errAnswerUnreadable = answerError("the upstream's answer is not a JSON object the gateway can read, so the gate could not add its caveat and sufficiency to it")
)

// answerError is an upstream answer (or stream event) the gateway will not
// relay: 502 upstream with its message.
type answerError string

func (e answerError) Error() string { return string(e) }

// relayChecked reads a 200 answer that is not a stream (whatever its
// Content-Type says: a client reads it as JSON) as its clients read it
// (clientjson.go). A gated one is checked, gets the caveat and the gate's
// "sufficiency" object, and loses the upstream's own; one too large or
// unreadable to edit is not relayed. An ungated one only loses the
// upstream's sufficiency, and goes as it came when it cannot be read.
func (s *Server) relayChecked(w http.ResponseWriter, r *http.Request, body *upstreamBody, size int64, x *exchange) {
	const status = http.StatusOK
	h := w.Header()
	b, held, err := s.bodies.readHeld(body, size, s.opts.MaxResponseBytes)
	switch {
	case errors.Is(err, errOverloaded) && x.d == nil:
		s.relayBody(w, r, status, nil, body, false) // held by no one: relayed as it comes
		return
	case errors.Is(err, errOverloaded):
		w.Header().Set("Retry-After", "1")
		s.failGateway(w, newAPIError(503, codeOverloaded, "", err.Error()))
		return
	case err != nil:
		s.upstreamBroke(w, r, err)
		return
	}
	defer held.release()
	oversize := int64(len(b)) > s.opts.MaxResponseBytes
	var root jsonx.Value
	var perr error
	if !oversize {
		var read []byte
		root, read, perr = parseAsClients(b)
		switch {
		case perr == nil && root.Kind() != jsonx.Object:
			perr = errAnswerUnreadable
		case perr == nil:
			b = read
			x.span.readAnswer(&root)
		}
	}
	switch {
	case x.d == nil && oversize:
		s.relayBody(w, r, status, b, body, false)
	case x.d == nil && perr != nil:
		writeRaw(w, status, b)
	case x.d == nil && hasSufficiency(&root):
		writeRaw(w, status, appendEdited(nil, &root, nil, withoutSufficiency(nil)))
	case x.d == nil:
		writeRaw(w, status, b)
	case oversize || perr != nil:
		skipped, bad := "not_json", errAnswerUnreadable
		if oversize {
			skipped, bad = "oversize", errAnswerOversize
		}
		if x.check {
			h.Set(HeaderAnswerCheck, "skipped-"+strings.ReplaceAll(skipped, "_", "-"))
			s.metrics.answerChecks.WithLabelValues("skipped_" + skipped).Inc()
		}
		s.log.Warn("gateway: upstream answer not relayed", "upstream", s.upstream.Redacted(), "error", bad.Error(), "bytes", len(b))
		s.failGateway(w, upstreamFailure(bad))
	default:
		if x.check {
			s.checkAnswer(r, h, &root, x)
		}
		if caveat := s.caveatText(x.d); caveat != "" {
			writeRaw(w, status, x.api.edited(&root, s.opts.CaveatDelivery, caveat, x.d))
			return
		}
		writeRaw(w, status, withSufficiency(b, &root, x.d))
	}
}

// checkAnswer runs the gate's answer check on the answer's text (chat:
// choices[0].message.content; Responses API: its output_text) and reports it
// in headers; a soft refusal is a gap event. It reads the upstream's text,
// before any caveat is added.
func (s *Server) checkAnswer(r *http.Request, h http.Header, root *jsonx.Value, x *exchange) {
	content, ok := x.api.answer(root)
	if !ok {
		h.Set(HeaderAnswerCheck, "skipped-no-content")
		s.metrics.answerChecks.WithLabelValues("skipped_no_content").Inc()
		return
	}
	in := []byte(`{"answer":`)
	in = jsonx.AppendString(in, content)
	in = append(in, `,"tags":[`...)
	for i, t := range x.tags {
		if i > 0 {
			in = append(in, ',')
		}
		in = jsonx.AppendString(in, t)
	}
	in = append(in, `],"query":`...)
	in = jsonx.AppendString(in, x.query)
	in = append(in, '}')
	out, e := s.validate(r, in)
	if e != nil && e.Code == gate.CodeLimit {
		// Over the validator's limits (the policy's max_request_bytes, the
		// host's input cap): the answer is relayed unchecked, as one over
		// max_response_bytes is.
		h.Set(HeaderAnswerCheck, "skipped-oversize")
		s.metrics.answerChecks.WithLabelValues("skipped_oversize").Inc()
		return
	}
	if e != nil {
		h.Set(HeaderAnswerCheck, "error")
		s.metrics.answerChecks.WithLabelValues("error").Inc()
		s.log.Warn("gateway: answer check failed", "code", e.Code, "error", e.Message)
		return
	}
	v := parseValidation(out)
	s.answerChecked(v)
	h.Set(HeaderAnswerCheck, "ok")
	h.Set(HeaderSoftRefusal, strconv.FormatBool(v.SoftRefusal))
	if len(v.Unknown) > 0 {
		h.Set(HeaderUnknownCite, strings.Join(v.Unknown, ","))
	}
	h.Set(HeaderUncited, strconv.Itoa(len(v.Uncited)))
	if v.SoftRefusal {
		s.logSoftRefusal(x.id, v)
	}
}

// withSufficiency adds "sufficiency": {score, level, factors} to the answer
// object b (root, parsed): spliced before the closing brace, so the
// upstream's bytes are kept; an upstream "sufficiency" member (in any case)
// is dropped and the gate's written last, so it is the one every client
// reads.
func withSufficiency(b []byte, root *jsonx.Value, d *decisionView) []byte {
	for i := 0; i < root.Len(); i++ {
		if isSufficiency(root.Key(i)) {
			return appendObject(nil, root, nil, noEdit, "sufficiency", sufficiencyMember(d))
		}
	}
	end := bytes.LastIndexByte(b, '}')
	out := make([]byte, 0, len(b)+128)
	out = append(out, b[:end]...)
	if root.Len() > 0 {
		out = append(out, ',')
	}
	out = append(out, `"sufficiency":`...)
	out = appendSufficiency(out, d)
	return append(out, b[end:]...)
}

func writeRaw(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}
