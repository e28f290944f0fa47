package server

import (
	"net/http"
	"net/url"
	"strings"
)

// Which requests are gated is decided by the path the upstream will serve,
// not by how the client spelled it. The upstream request's path (the base
// URL's path, then the client's) is read as the most forgiving server or
// proxy in front of it could read it: percent-decoded (repeatedly), with
// backslashes as slashes, in lower case, without ;parameters, empty and dot
// segments resolved. A path that then ends in an endpoint some upstream
// answers as chat completions or the Responses API is gated:
//
//	.../chat/completions  OpenAI, vLLM, Ollama, llama.cpp (also without /v1), Azure deployments
//	.../responses         OpenAI, vLLM, Ollama, llama.cpp (also without /v1)
//	.../api/chat          llama.cpp's chat completions alias (Ollama's native chat)
//	.../invocations       vLLM's SageMaker endpoint, which serves a chat body as chat completions
//
// Reading more paths as gated than an upstream routes costs nothing: a body
// without documents passes through as it came. Reading fewer would send
// documents to the model ungated.

// gatedRoute returns the gated API the upstream would answer r with, or
// nil. Without an upstream it reads the request's own path.
func (s *Server) gatedRoute(r *http.Request) *gatedAPI {
	u := r.URL
	if s.upstream != nil {
		u = s.upstreamURL(r.URL)
	}
	seg := routeSegments(u.EscapedPath())
	n := len(seg)
	last := func(want ...string) bool {
		if n < len(want) {
			return false
		}
		for i, w := range want {
			if seg[n-len(want)+i] != w {
				return false
			}
		}
		return true
	}
	switch {
	case last("chat", "completions"), last("api", "chat"), last("invocations"):
		return chatAPI
	case last("responses"):
		return responsesAPI
	}
	return nil
}

// routeSegments reads an escaped path as a lenient router would (see
// above) and returns its segments.
func routeSegments(escaped string) []string {
	p := escaped
	for range 3 { // %252F is %2F to a server that decodes twice
		d, err := url.PathUnescape(p)
		if err != nil || d == p {
			break
		}
		p = d
	}
	p = strings.ToLower(strings.ReplaceAll(p, `\`, "/"))
	var seg []string
	for _, s := range strings.Split(p, "/") {
		s, _, _ = strings.Cut(s, ";")
		switch s {
		case "", ".":
		case "..":
			if len(seg) > 0 {
				seg = seg[:len(seg)-1]
			}
		default:
			seg = append(seg, s)
		}
	}
	return seg
}

// serveGatedRoute answers a request to a gated endpoint: POST is gated; a
// GET, HEAD or OPTIONS without a body (listing stored completions, a CORS
// preflight) passes through; any other method, or one of those with a
// body, cannot be a chat request the gate has seen and is refused (405),
// so that no spelling of the method carries documents past the gate.
func (s *Server) serveGatedRoute(w http.ResponseWriter, r *http.Request, api *gatedAPI) {
	switch r.Method {
	case http.MethodPost:
		s.handleGated(api)(w, r)
		return
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		if s.upstream != nil && r.ContentLength == 0 && len(r.TransferEncoding) == 0 {
			s.handlePassthrough(w, r)
			return
		}
	}
	setRoute(w, api.route)
	allow := "POST"
	if s.upstream != nil {
		allow = "GET, HEAD, OPTIONS, POST"
	}
	w.Header().Set("Allow", allow)
	s.failGateway(w, newAPIError(405, codeMethod, "", r.Method+" "+r.URL.Path+": a chat request is sent with POST"))
}
