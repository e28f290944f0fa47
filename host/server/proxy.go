package server

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/chat"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// In gateway mode ctxgate stands where the OpenAI API would: the two
// endpoints that carry retrieved documents are gated (gateway.go), and every
// other request the server does not answer itself (models, embeddings,
// completions, files, audio, GET /v1/chat/completions/{id}, ...) is passed
// through unchanged: method, path, query, headers except hop-by-hop and
// X-Ctxgate-*, and the body in both directions as it comes, never held
// whole.

// upstreamCall is one request to the upstream.
type upstreamCall struct {
	route   string // the metric label: chat_completions, responses, passthrough
	method  string
	body    io.Reader
	length  int64             // -1: unknown (chunked)
	headers func(http.Header) // adds the gate's headers, when set
	// keepEncoding forwards the client's Accept-Encoding, so a compressed
	// answer is relayed compressed. Gated calls drop it: the transport
	// negotiates gzip and decompresses, because the gateway reads the JSON.
	keepEncoding bool
	span         *chatSpan // a gated call's span (tracing_genai.go); nil: none
}

// roundTrip sends c to the upstream and returns its response, with the
// cancel that ends the exchange (the caller defers it). On failure it has
// answered the client (or found it gone) and returns false.
func (s *Server) roundTrip(w http.ResponseWriter, r *http.Request, c upstreamCall) (*http.Response, context.CancelFunc, bool) {
	u := s.upstreamURL(r.URL)
	ctx, cancel := context.WithCancel(c.span.context(r))
	req, err := http.NewRequestWithContext(ctx, c.method, u.String(), c.body)
	if err != nil {
		cancel()
		s.log.Error("gateway: cannot build the upstream request", "upstream", u.Redacted(), "error", err.Error())
		s.failGateway(w, newAPIError(500, gate.CodeInternal, "", "cannot build the upstream request"))
		return nil, nil, false
	}
	copyHeaders(req.Header, r.Header)
	stripGateHeaders(req.Header) // only the gate speaks for the gate
	req.Header.Del("Host")
	req.Header.Del("Expect") // the server already answered 100-continue
	for _, h := range routeOverrideHeaders {
		req.Header.Del(h)
	}
	if !c.keepEncoding {
		req.Header.Del("Accept-Encoding")
	}
	if c.headers != nil {
		c.headers(req.Header)
	}
	if s.trace != nil {
		s.trace.inject(ctx, req.Header)
	}
	req.ContentLength = c.length
	if c.length == 0 {
		req.Body = http.NoBody
	}

	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		e := upstreamFailure(err)
		outcome := "error"
		if e.Code == codeUpstreamTimeout {
			outcome = "timeout"
		}
		s.metrics.upstream.WithLabelValues(c.route, outcome).Observe(time.Since(start).Seconds())
		c.span.fail(e.Code, err.Error())
		cancel()
		if r.Context().Err() != nil {
			return nil, nil, false // the client went away; nobody to answer
		}
		s.log.Warn("gateway: upstream request failed", "upstream", u.Redacted(), "error", err.Error())
		if c.headers != nil {
			c.headers(w.Header()) // the client learns what the gate decided all the same
		}
		s.failGateway(w, e)
		return nil, nil, false
	}
	s.metrics.upstream.WithLabelValues(c.route, statusClass(resp.StatusCode)).Observe(time.Since(start).Seconds())
	c.span.status(resp.StatusCode)
	return resp, cancel, true
}

// upstreamURL is the upstream request's URL: the upstream base URL, then
// the request's path and query. A base URL ending in /v1 (the OpenAI SDKs'
// base-URL form, https://api.openai.com/v1) takes the request's path
// without its own /v1, so --upstream http://host/v1 and http://host reach
// the same http://host/v1/chat/completions. A query on the base URL is
// kept, before the request's.
func (s *Server) upstreamURL(in *url.URL) *url.URL {
	u := *s.upstream
	base := strings.TrimSuffix(u.Path, "/")
	baseRaw := strings.TrimSuffix(u.EscapedPath(), "/")
	p, raw := in.Path, in.EscapedPath()
	if strings.HasSuffix(base, "/v1") && (p == "/v1" || strings.HasPrefix(p, "/v1/")) && strings.HasPrefix(raw, "/v1") {
		p, raw = p[len("/v1"):], raw[len("/v1"):]
	}
	u.Path, u.RawPath = base+p, baseRaw+raw
	switch {
	case u.RawQuery == "":
		u.RawQuery = in.RawQuery
	case in.RawQuery != "":
		u.RawQuery += "&" + in.RawQuery
	}
	return &u
}

// routeOverrideHeaders name, to some servers and proxies (IIS, Symfony,
// Zend, nginx setups), the path a request is routed by in place of its
// own: sent by a client, one would take a body the gateway passed through
// as, say, embeddings to chat completions ungated. Only the gateway routes.
var routeOverrideHeaders = []string{"X-Original-Url", "X-Original-Uri", "X-Rewrite-Url"}

// hopHeaders are connection-level headers a proxy must not forward
// (RFC 9110 section 7.6.1).
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// copyHeaders copies src into dst without the hop-by-hop headers and
// Content-Length (a relayed body's length is the server's to set).
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

// gatedPaths are the gated endpoints as the OpenAI API spells them (the
// routes of the metrics and the access log); route.go decides which
// requests reach them.
var gatedPaths = map[string]*gatedAPI{"/v1/chat/completions": chatAPI, "/v1/responses": responsesAPI}

// handlePassthrough relays a request the server does not handle, and that
// no upstream answers as a gated endpoint (route.go), to the upstream
// unchanged. Without an upstream it is a 404.
func (s *Server) handlePassthrough(w http.ResponseWriter, r *http.Request) {
	if s.upstream == nil {
		s.fail(w, newAPIError(404, codeNotFound, "", "no such endpoint: "+r.URL.Path))
		return
	}
	setRoute(w, "passthrough")
	resp, cancel, ok := s.roundTrip(w, r, upstreamCall{route: "passthrough", method: r.Method, body: r.Body, length: r.ContentLength, keepEncoding: true})
	if !ok {
		return
	}
	defer cancel()
	h := w.Header()
	copyHeaders(h, resp.Header)
	stripGateHeaders(h)
	if resp.ContentLength >= 0 && r.Method != http.MethodHead {
		h.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	// No whole-body deadline: a download or a stream may take long; each
	// wait for more is bounded by upstream_idle_timeout.
	ub := newUpstreamBody(resp.Body, cancel, s.opts.UpstreamIdleTimeout, time.Time{})
	defer ub.Close()
	if isEventStream(resp.Header.Get("Content-Type")) {
		h.Del("Content-Length")
		w.WriteHeader(resp.StatusCode)
		s.relayStream(w, r, ub, nil)
		return
	}
	s.relayBody(w, r, resp.StatusCode, nil, ub, true)
}

// stripRetrieval returns a body the gate did not decide without its
// retrieved documents (the member at documentsPath) and the ctxgate
// extension, so it can go to an upstream that would reject them; the other
// members keep their bytes. ok is false for a body that is not a JSON
// object the strict parser reads (bad syntax, duplicate members, too deep,
// NaN, compressed): its documents cannot be found, while an upstream's
// laxer parser may still read them, so it must not be forwarded.
func stripRetrieval(body []byte, documentsPath []string) (out []byte, ok bool) {
	if v, err := jsonx.Parse(body, chat.MaxDepth); err != nil || v.Kind() != jsonx.Object {
		return nil, false
	}
	if out, changed := withoutMember(body, documentsPath, true); changed {
		return out, true
	}
	return body, true
}

// withoutMember writes the object obj without the member at path (and, at
// the root, without the extension member); changed is false when there was
// nothing to remove.
func withoutMember(obj []byte, path []string, root bool) (out []byte, changed bool) {
	out = append(make([]byte, 0, len(obj)), '{')
	n := 0
	ok := chat.EachMember(obj, func(name, value []byte) {
		key := memberName(name)
		switch {
		case root && key == chat.ExtensionField:
			changed = true
			return
		case len(path) > 0 && key == path[0]:
			if len(path) == 1 {
				changed = true
				return
			}
			if len(value) > 0 && value[0] == '{' {
				if v, c := withoutMember(value, path[1:], false); c {
					value, changed = v, true
				}
			}
		}
		if n > 0 {
			out = append(out, ',')
		}
		n++
		out = append(out, '"')
		out = append(out, name...)
		out = append(out, '"', ':')
		out = append(out, value...)
	})
	if !ok {
		return obj, false
	}
	return append(out, '}'), changed
}

// memberName decodes a raw member name (escapes included) as JSON does.
func memberName(raw []byte) string {
	if !strings.Contains(string(raw), `\`) {
		return string(raw)
	}
	v, err := jsonx.Parse(append(append([]byte{'"'}, raw...), '"'), 1)
	if err != nil {
		return string(raw)
	}
	return v.Str()
}
