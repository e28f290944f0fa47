package server

import (
	"net/http"
	"net/url"
	"testing"
)

// TestGatedRouteOf: which upstream paths are gated, and which stay
// pass-through (a stored completion, a response by id, the other APIs),
// for both base-URL forms. cmd/ctxgate's TestServeGatedRoutes sends every
// spelling of internal/hostile.GatedRoutes through a real ctxgate serve.
func TestGatedRouteOf(t *testing.T) {
	tests := []struct {
		path string
		want *gatedAPI
	}{
		{"/v1/chat/completions", chatAPI},
		{"/chat/completions", chatAPI},
		{"/v1/CHAT/completions;a=b/", chatAPI},
		{"/v1/chat%2Fcompletions", chatAPI},
		{"/v1/chat%252Fcompletions", chatAPI},
		{"/v1/x/..%2Fchat/./completions", chatAPI},
		{"/v1/chat%5Ccompletions", chatAPI},
		{"/openai/deployments/d/chat/completions?api-version=1", chatAPI},
		{"/api/chat", chatAPI},
		{"/invocations", chatAPI},
		{"/v1/responses", responsesAPI},
		{"/responses//", responsesAPI},
		{"/v1/Respons%65s", responsesAPI},
		{"/v1/chat/completions/chatcmpl-1", nil},
		{"/v1/chat/completions/chatcmpl-1/messages", nil},
		{"/v1/responses/resp_1", nil},
		{"/v1/responses/resp_1/input_items", nil},
		{"/v1/completions", nil},
		{"/v1/embeddings", nil},
		{"/v1/models", nil},
		{"/v1/chat", nil},
		{"/api/generate", nil},
		{"/v1/gate", nil},
	}
	for _, base := range []string{"http://up:8000", "http://up:8000/v1"} {
		b, _ := url.Parse(base)
		s := &Server{upstream: b}
		for _, tt := range tests {
			u, err := url.ParseRequestURI(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.gatedRoute(&http.Request{URL: u}); got != tt.want {
				t.Errorf("%s + %s: gated as %v, want %v", base, tt.path, routeOf(got), routeOf(tt.want))
			}
		}
	}
}

func routeOf(api *gatedAPI) string {
	if api == nil {
		return "pass-through"
	}
	return api.route
}

// TestRouteOverrideHeadersDropped: a client's X-Original-URL (and the
// like), by which some servers and proxies route a request, never reaches
// the upstream: a body passed through to /v1/embeddings cannot be routed
// to chat completions behind the gateway's back.
func TestRouteOverrideHeadersDropped(t *testing.T) {
	up := newUpstream(t, "")
	s := start(t, Options{Upstream: up.ts.URL})
	chat, _ := chatFor(t, request(t, "default", "refuse_off_topic"), false)
	do(t, http.MethodPost, s.url+"/v1/embeddings", chat, "X-Original-URL", "/v1/chat/completions",
		"X-Rewrite-URL", "/v1/chat/completions", "X-Original-URI", "/v1/chat/completions")
	_, hdr := up.last(t)
	for _, h := range routeOverrideHeaders {
		if v := hdr.Get(h); v != "" {
			t.Errorf("%s: %s reached the upstream", h, v)
		}
	}
}
