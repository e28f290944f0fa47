package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/chat"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// handleChat: POST /v1/chat/completions in gateway mode. The request's
// retrieved documents are gated, then: inject/caveat rewrite the messages
// (a system message with the constraint instructions and the <sources>
// block, documents removed), fallback sends the minimal prompt, refuse
// answers locally without calling the upstream. The upstream's JSON answer
// gets the answer check (soft refusal, citations) and the sufficient-context gateway's
// "sufficiency" object; a stream is relayed as it arrives, headers only.
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	if s.upstream == nil {
		s.fail(w, newAPIError(404, codeNoUpstream, "", "gateway mode is off: start the server with --upstream URL"))
		return
	}
	body, e := s.readBody(w, r)
	if e != nil {
		s.fail(w, e)
		return
	}
	if s.opts.GatewayOff {
		s.forwardUngated(w, r, body, "skip", "")
		return
	}
	c, err := chat.Parse(body, s.opts.DocumentsPath, s.opts.QueryPath)
	if err == chat.ErrNotGated {
		s.forwardUngated(w, r, body, "skip", "")
		return
	}
	if err != nil {
		s.gateFailed(w, r, body, fromGateError(err))
		return
	}
	_, d, e := s.decide(r, c.GateRequest(nil), true)
	if e != nil {
		s.gateFailed(w, r, body, renameField(c, e))
		return
	}
	id := s.newID()
	s.remember(id, c.QueryText(), c.AppendQueryEmbedding(nil), d)
	s.metrics.gateway.WithLabelValues(d.Action).Inc()

	if gate.Action(d.Action) == gate.ActionRefuse {
		s.refuse(w, c, d, id)
		return
	}
	out, err := c.Upstream(nil, chatPrompt(d))
	if err != nil {
		s.gateFailed(w, r, body, fromGateError(err))
		return
	}
	check := gate.Action(d.Action) != gate.ActionFallback && !s.opts.NoAnswerCheck
	x := &exchange{d: d, id: id, check: check, tags: d.tags(), query: c.QueryText(), stream: c.Stream()}
	s.proxy(w, r, out, x)
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

// refuse answers a hard refusal locally: the upstream is never called.
func (s *Server) refuse(w http.ResponseWriter, c *chat.Chat, d *decisionView, id string) {
	msg := ""
	if d.Refusal != nil {
		msg = d.Refusal.Message
	}
	h := w.Header()
	setDecisionHeaders(h, d, id)
	if c.Stream() {
		b := chat.RefusalStream(nil, c.Model(), msg)
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(http.StatusOK)
		w.Write(b)
		return
	}
	writeJSON(w, http.StatusOK, refusalCompletion(nil, c.Model(), msg, d))
}

// gateFailed handles a chat request the gate could not decide: fail open
// sends the original body upstream untouched, fail closed answers the error.
// Either way the client sees x-ctxgate-action: error and the code.
func (s *Server) gateFailed(w http.ResponseWriter, r *http.Request, body []byte, e *apiError) {
	s.metrics.gateway.WithLabelValues("error").Inc()
	w.Header().Set(HeaderAction, "error")
	w.Header().Set(HeaderError, e.Code)
	if s.opts.FailOpen && e.Code != codeUnavailable {
		s.metrics.errors.WithLabelValues(e.Code).Inc()
		s.log.Warn("gateway: request passed through ungated (fail_open)", "code", e.Code, "field", e.Field, "error", e.Message)
		s.forwardUngated(w, r, body, "error", e.Code)
		return
	}
	s.fail(w, e)
}

// forwardUngated sends the original body upstream.
func (s *Server) forwardUngated(w http.ResponseWriter, r *http.Request, body []byte, action, code string) {
	if action == "skip" {
		s.metrics.gateway.WithLabelValues("skip").Inc()
	}
	s.proxy(w, r, body, &exchange{ungated: action, errCode: code})
}

// exchange is what the response path needs to know about the request.
type exchange struct {
	d      *decisionView // nil when ungated
	id     string
	check  bool     // run the answer check on a JSON answer
	tags   []string // the S# tags the prompt offered
	query  string
	stream bool

	ungated, errCode string // "skip" or "error" when d is nil
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

// hopHeaders are connection-level headers a proxy must not forward
// (RFC 9110 section 7.6.1).
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append([]string(nil), vs...)
	}
	for _, c := range src.Values("Connection") {
		for _, f := range strings.Split(c, ",") {
			dst.Del(strings.TrimSpace(f))
		}
	}
	for _, k := range hopHeaders {
		dst.Del(k)
	}
	dst.Del("Content-Length")
}

// proxy sends body upstream and relays the answer. The upstream's time is
// bounded at every step: upstream_timeout until its headers,
// upstream_idle_timeout between reads of its body, and write_timeout for a
// whole answer that is not a stream.
func (s *Server) proxy(w http.ResponseWriter, r *http.Request, body []byte, x *exchange) {
	deadline := time.Now().Add(s.opts.WriteTimeout)
	u := *s.upstream
	u.Path = strings.TrimSuffix(u.Path, "/") + r.URL.Path
	u.RawPath = ""
	u.RawQuery = r.URL.RawQuery
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		s.log.Error("gateway: cannot build the upstream request", "upstream", u.Redacted(), "error", err.Error())
		s.fail(w, newAPIError(500, gate.CodeInternal, "", "cannot build the upstream request"))
		return
	}
	copyHeaders(req.Header, r.Header)
	stripGateHeaders(req.Header) // only the gate speaks for the gate
	// Let the transport negotiate gzip and decompress: the answer check
	// must read the JSON.
	req.Header.Del("Accept-Encoding")
	req.Header.Del("Host")
	x.setHeaders(req.Header)
	req.ContentLength = int64(len(body))

	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		s.metrics.upstream.WithLabelValues("error").Observe(time.Since(start).Seconds())
		if r.Context().Err() != nil {
			return // the client went away; nobody to answer
		}
		s.log.Warn("gateway: upstream request failed", "upstream", u.Redacted(), "error", err.Error())
		s.fail(w, upstreamFailure(err))
		return
	}
	s.metrics.upstream.WithLabelValues("ok").Observe(time.Since(start).Seconds())

	h := w.Header()
	copyHeaders(h, resp.Header)
	stripGateHeaders(h)
	x.setHeaders(h)
	ctype := resp.Header.Get("Content-Type")
	stream := strings.HasPrefix(ctype, "text/event-stream")
	if stream {
		deadline = time.Time{} // a stream moves the write deadline on with every event
	}
	ub := newUpstreamBody(resp.Body, cancel, s.opts.UpstreamIdleTimeout, deadline)
	defer ub.Close()
	switch {
	case stream:
		if x.check {
			h.Set(HeaderAnswerCheck, "skipped-stream")
			s.metrics.answerChecks.WithLabelValues("skipped_stream").Inc()
		}
		w.WriteHeader(resp.StatusCode)
		s.relayStream(w, r, ub)
	case x.d != nil && resp.StatusCode == http.StatusOK && strings.HasPrefix(ctype, "application/json"):
		s.relayChecked(w, r, resp.StatusCode, ub, x)
	default:
		s.relayBody(w, r, resp.StatusCode, nil, ub)
	}
}

// relayChecked reads a JSON answer, checks it, and adds the "sufficiency"
// object. An answer over MaxResponseBytes is relayed unchecked.
func (s *Server) relayChecked(w http.ResponseWriter, r *http.Request, status int, body *upstreamBody, x *exchange) {
	h := w.Header()
	b, err := io.ReadAll(io.LimitReader(body, s.opts.MaxResponseBytes+1))
	if err != nil {
		s.upstreamBroke(w, r, err)
		return
	}
	if int64(len(b)) > s.opts.MaxResponseBytes {
		if x.check {
			h.Set(HeaderAnswerCheck, "skipped-oversize")
			s.metrics.answerChecks.WithLabelValues("skipped_oversize").Inc()
		}
		s.relayBody(w, r, status, b, body)
		return
	}
	root, perr := jsonx.Parse(b, chat.MaxDepth)
	if perr != nil || root.Kind() != jsonx.Object {
		if x.check {
			h.Set(HeaderAnswerCheck, "skipped-not-json")
			s.metrics.answerChecks.WithLabelValues("skipped_not_json").Inc()
		}
		writeRaw(w, status, b)
		return
	}
	if x.check {
		s.checkAnswer(r, h, &root, x)
	}
	writeRaw(w, status, withSufficiency(b, &root, x.d))
}

// checkAnswer runs the gate's answer check on choices[0].message.content and
// reports it in headers; a soft refusal is a gap event.
func (s *Server) checkAnswer(r *http.Request, h http.Header, root *jsonx.Value, x *exchange) {
	content, ok := chat.AnswerOf(root)
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
// object: spliced before the closing brace, so the upstream's bytes are kept;
// an upstream "sufficiency" member is replaced.
func withSufficiency(b []byte, root *jsonx.Value, d *decisionView) []byte {
	empty := root.Len() == 0
	if root.Get("sufficiency") != nil {
		out := []byte{'{'}
		n := 0
		for i := 0; i < root.Len(); i++ {
			if root.Key(i) == "sufficiency" {
				continue
			}
			if n > 0 {
				out = append(out, ',')
			}
			n++
			out = jsonx.AppendString(out, root.Key(i))
			out = append(out, ':')
			out = jsonx.AppendValue(out, root.Member(i))
		}
		b, empty = append(out, '}'), n == 0
	}
	end := bytes.LastIndexByte(b, '}')
	out := make([]byte, 0, len(b)+128)
	out = append(out, b[:end]...)
	if !empty {
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
