package filter

import (
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/proxy-wasm/proxy-wasm-go-sdk/proxywasm"
	"github.com/proxy-wasm/proxy-wasm-go-sdk/proxywasm/types"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/chat"
)

// Header names the filter sets: gate/chat's, shared with the server's
// gateway mode.
const (
	HeaderAction      = chat.HeaderAction
	HeaderLevel       = chat.HeaderLevel
	HeaderConfidence  = chat.HeaderConfidence
	HeaderPolicy      = chat.HeaderPolicy
	HeaderRefusal     = chat.HeaderRefusal
	HeaderError       = chat.HeaderError
	HeaderAnswerCheck = chat.HeaderAnswerCheck
	HeaderSoftRefusal = chat.HeaderSoftRefusal
	HeaderUnknownCite = chat.HeaderUnknownCite
	HeaderUncited     = chat.HeaderUncited
)

// stream is one HTTP exchange.
type stream struct {
	types.DefaultHttpContext
	p *plugin

	buffering bool        // request body is being buffered for the gate
	mirror    [][2]string // x-ctxgate-* headers for the response to the client
	tags      []string    // S# tags the rewritten prompt offered
	check     bool        // run the answer check on the response
	respBuf   bool        // response body is being buffered for the check
	large     bool        // a body of largeBody bytes or more was read
}

func (s *stream) OnHttpRequestHeaders(_ int, endOfStream bool) types.Action {
	if s.p.engine == nil {
		return types.ActionContinue
	}
	method, _ := proxywasm.GetHttpRequestHeader(":method")
	path, _ := proxywasm.GetHttpRequestHeader(":path")
	if method != "POST" || !pathMatches(path, s.p.cfg.PathPrefix) {
		return types.ActionContinue
	}
	if endOfStream {
		s.skip()
		return types.ActionContinue
	}
	if cl, err := proxywasm.GetHttpRequestHeader("content-length"); err == nil {
		if n, err := strconv.Atoi(cl); err == nil && n > s.p.cfg.MaxBodyBytes {
			return s.oversize(n)
		}
	}
	// The body may be rewritten, so its length is unknown until then; the
	// headers are held (Pause) so the x-ctxgate-* headers can still be added
	// once the body has been gated.
	proxywasm.RemoveHttpRequestHeader("content-length")
	s.buffering = true
	return types.ActionPause
}

func (s *stream) OnHttpRequestBody(bodySize int, endOfStream bool) types.Action {
	if !s.buffering {
		return types.ActionContinue
	}
	if bodySize > s.p.cfg.MaxBodyBytes {
		s.buffering = false
		return s.oversize(bodySize)
	}
	if !endOfStream {
		return types.ActionPause
	}
	s.buffering = false
	s.large = s.large || bodySize >= largeBody
	body, err := s.p.readBody(proxywasm.GetHttpRequestBody, bodySize)
	if err != nil || len(body) != bodySize {
		return s.fail(&gate.Error{Code: gate.CodeInternal, Message: "cannot read the request body"})
	}
	return s.gate(body)
}

// gate runs the engine on a complete request body and applies the decision.
func (s *stream) gate(body []byte) types.Action {
	start := time.Now()
	p := s.p
	ch, err := chat.ParseUsing(&p.json, body, p.cfg.DocumentsPath, p.cfg.QueryPath)
	if err == chat.ErrNotGated {
		s.skip()
		return types.ActionContinue
	}
	if err != nil {
		return s.fail(err)
	}
	p.scratch = ch.GateRequest(p.scratch[:0])
	// Engine-owned and decoded in place: no allocation for the request, and
	// nothing below keeps it past this call (the verdict copies what it needs).
	req, err := p.engine.DecodeRequestInPlace(p.scratch)
	if err != nil {
		return s.fail(ch.UserField(err))
	}
	// The engine's own decision: the verdict copies what outlives this call.
	d, err := p.engine.DecideInPlace(req)
	if err != nil {
		return s.fail(ch.UserField(err))
	}
	v, err := newVerdict(d)
	if err != nil {
		return s.fail(err)
	}

	var newBody []byte
	if v.Action != string(gate.ActionRefuse) {
		if newBody, err = ch.UpstreamUsing(p.upstream[:0], &p.system, &v.Prompt); err != nil {
			return s.fail(err)
		}
		// Reused: the host copies the body out of the module's memory
		// when it is replaced, so the next exchange may overwrite it.
		p.upstream = newBody
		if v.Action != string(gate.ActionFallback) {
			s.tags = v.Tags
			s.check = p.cfg.SoftRefusalCheck
		}
	}

	st := p.stats
	st.requests.Increment(1)
	inc(st.action, v.Action)
	inc(st.level, v.Level)
	st.confidence.Record(v.ConfBP)
	s.mirror = [][2]string{
		{HeaderAction, v.Action},
		{HeaderLevel, v.Level},
		{HeaderConfidence, v.Confidence},
		{HeaderPolicy, v.Policy},
	}

	if v.Action == string(gate.ActionRefuse) {
		inc(st.refusal, v.RefusalType)
		s.mirror = append(s.mirror, [2]string{HeaderRefusal, v.RefusalType})
		reply, ctype := s.refusal(ch, v)
		st.gateTime.Record(micros(start))
		return s.local(200, ctype, reply)
	}
	if err := proxywasm.ReplaceHttpRequestBody(newBody); err != nil {
		return s.fail(&gate.Error{Code: gate.CodeInternal, Message: "cannot replace the request body: " + err.Error()})
	}
	s.addRequestHeaders()
	st.gateTime.Record(micros(start))
	return types.ActionContinue
}

func (s *stream) refusal(ch *chat.Chat, v *verdict) ([]byte, string) {
	if ch.Stream() {
		return chat.RefusalStream(nil, ch.Model(), v.RefusalMessage), "text/event-stream"
	}
	return chat.RefusalCompletion(nil, ch.Model(), v.RefusalMessage), "application/json"
}

// skip marks a request on the gated path that carries no documents.
func (s *stream) skip() {
	inc(s.p.stats.action, "skip")
	s.mirror = [][2]string{{HeaderAction, "skip"}}
	s.addRequestHeaders()
}

// oversize handles a body over max_body_bytes: 413, or through ungated.
func (s *stream) oversize(n int) types.Action {
	err := &gate.Error{Code: gate.CodeLimit, Field: "body",
		Message: "request body of " + strconv.Itoa(n) + " bytes exceeds max_body_bytes " + strconv.Itoa(s.p.cfg.MaxBodyBytes)}
	return s.failWith(err, !s.p.cfg.RejectOversize)
}

func (s *stream) fail(err error) types.Action { return s.failWith(err, s.p.cfg.FailOpen) }

// failWith ends a request the gate could not decide: through untouched with
// x-ctxgate-action: error (open), or a local error reply (closed). One log
// line either way.
func (s *stream) failWith(err error, open bool) types.Action {
	code := errorCode(err)
	inc(s.p.stats.errs, code)
	inc(s.p.stats.action, "error")
	s.mirror = [][2]string{{HeaderAction, "error"}, {HeaderError, code}}
	verb := "rejected"
	if open {
		verb = "passed through ungated"
	}
	proxywasm.LogWarn("ctxgate: request " + verb + ": " + code + ": " + err.Error())
	if open {
		s.addRequestHeaders()
		return types.ActionContinue
	}
	return s.local(errorStatus(code), "application/json", gate.AppendError(nil, err))
}

// local answers the client without calling upstream.
func (s *stream) local(status uint32, ctype string, body []byte) types.Action {
	// The request never leaves Envoy, but its headers are what a tracer's
	// request_header tags and the access log read.
	s.addRequestHeaders()
	h := make([][2]string, 0, len(s.mirror)+1)
	h = append(h, s.mirror...)
	// content-type goes last: banzaicloud's proxy-wasm-go-host (one of the
	// test hosts) drops the last pair of a local reply's headers when its
	// name is longer than its value (pkg/utils.DecodeMap checks the value
	// against the key's length). Envoy does not care about the order.
	h = append(h, [2]string{"content-type", ctype})
	if err := proxywasm.SendHttpResponse(status, h, body, -1); err != nil {
		proxywasm.LogError("ctxgate: cannot send the local reply: " + err.Error())
		return types.ActionContinue
	}
	return types.ActionPause
}

func (s *stream) addRequestHeaders() {
	for _, h := range s.mirror {
		proxywasm.ReplaceHttpRequestHeader(h[0], h[1])
	}
	publish(s.mirror)
}

func (s *stream) OnHttpResponseHeaders(_ int, endOfStream bool) types.Action {
	if len(s.mirror) == 0 {
		return types.ActionContinue
	}
	// Replace, not add: a local reply already carries them, and Envoy runs
	// it through this filter's response path too.
	for _, h := range s.mirror {
		proxywasm.ReplaceHttpResponseHeader(h[0], h[1])
	}
	if !s.check || endOfStream {
		return types.ActionContinue
	}
	s.check = false
	if status, _ := proxywasm.GetHttpResponseHeader(":status"); status != "200" {
		return types.ActionContinue
	}
	ctype, _ := proxywasm.GetHttpResponseHeader("content-type")
	switch {
	case strings.HasPrefix(ctype, "text/event-stream"):
		// Streaming answers are relayed chunk by chunk as they are
		// generated; holding them for the check would defeat streaming,
		// and the verdict could only arrive after the body anyway.
		s.p.stats.stream.Increment(1)
		skippedCheck("skipped-stream")
		return types.ActionContinue
	case strings.HasPrefix(ctype, "application/json"):
		// Hold the headers until the body is checked, so the verdict can
		// travel as headers in front of the body it describes.
		s.respBuf = true
		return types.ActionPause
	}
	return types.ActionContinue
}

func (s *stream) OnHttpResponseBody(bodySize int, endOfStream bool) types.Action {
	if !s.respBuf {
		return types.ActionContinue
	}
	if bodySize > s.p.cfg.MaxBodyBytes {
		s.respBuf = false
		skippedCheck("skipped-oversize")
		return types.ActionContinue
	}
	if !endOfStream {
		return types.ActionPause
	}
	s.respBuf = false
	s.large = s.large || bodySize >= largeBody
	body, err := s.p.readBody(proxywasm.GetHttpResponseBody, bodySize)
	if err != nil {
		skippedCheck("skipped-unreadable")
		return types.ActionContinue
	}
	checked := checkAnswer(s.p, body, s.tags)
	for _, h := range checked {
		proxywasm.ReplaceHttpResponseHeader(h[0], h[1])
	}
	publish(checked)
	s.tags = nil
	return types.ActionContinue
}

// OnHttpStreamDone drops what the exchange holds and, after an exchange
// that read a large body, runs the collector while nothing of the exchange
// is live. TinyGo's heap grows (doubling) whenever an allocation finds no
// free run long enough, and the megabyte bodies of the next exchange would
// otherwise meet a heap still cut up by this one's garbage: without this
// the filter's memory doubled every few rounds of the hostile inputs. The
// tags are the decision's strings, so they can point into the engine's
// buffers; a host that keeps a finished context (proxytest's Wasm runner
// never deletes one) would otherwise pin buffers the engine has outgrown.
func (s *stream) OnHttpStreamDone() {
	large := s.large
	s.tags, s.mirror, s.large = nil, nil, false
	if large {
		runtime.GC()
	}
}

// largeBody is the body size from which an exchange ends with a collection.
const largeBody = 64 << 10

func pathMatches(path, prefix string) bool {
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	if !strings.HasPrefix(path, prefix) {
		return false
	}
	// "/v1/chat/completions" must not match "/v1/chat/completionsX".
	return len(path) == len(prefix) || strings.HasSuffix(prefix, "/") || path[len(prefix)] == '/'
}

func micros(start time.Time) uint64 {
	d := time.Since(start)
	if d < 0 {
		return 0
	}
	return uint64(d / time.Microsecond)
}
