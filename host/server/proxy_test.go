package server

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// rawUpstream is an upstream that is only handler (newUpstream reads the
// request body before its handler sees it).
func rawUpstream(t testing.TB, handler http.HandlerFunc) *httptest.Server {
	ts := httptest.NewServer(handler)
	t.Cleanup(ts.Close)
	return ts
}

// TestUpstreamURL: the request's path and query under the upstream base URL;
// a base URL in the SDKs' form (ending in /v1) does not double the /v1.
func TestUpstreamURL(t *testing.T) {
	tests := []struct{ base, req, want string }{
		{"http://up:8000", "/v1/chat/completions", "http://up:8000/v1/chat/completions"},
		{"http://up:8000/", "/v1/models?limit=2", "http://up:8000/v1/models?limit=2"},
		{"http://up:8000/v1", "/v1/chat/completions", "http://up:8000/v1/chat/completions"},
		{"http://up:8000/v1/", "/v1/embeddings", "http://up:8000/v1/embeddings"},
		{"https://api.example/openai/v1", "/v1/models/meta-llama%2FLlama-3", "https://api.example/openai/v1/models/meta-llama%2FLlama-3"},
		{"http://up/v1", "/v1", "http://up/v1"},
		{"http://up/v1", "/v10/x", "http://up/v1/v10/x"}, // only a whole /v1 segment
		{"http://up/proxy", "/v1/models", "http://up/proxy/v1/models"},
		{"http://up/v1?api-version=2", "/v1/chat/completions?x=1", "http://up/v1/chat/completions?api-version=2&x=1"},
		{"http://up/v1?api-version=2", "/v1/models", "http://up/v1/models?api-version=2"},
	}
	for _, tt := range tests {
		base, _ := url.Parse(tt.base)
		s := &Server{upstream: base}
		in, err := url.ParseRequestURI(tt.req)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.upstreamURL(in).String(); got != tt.want {
			t.Errorf("%s + %s = %s, want %s", tt.base, tt.req, got, tt.want)
		}
	}
}

// TestPassthrough: in gateway mode every path the server does not serve
// reaches the upstream unchanged (method, path, query, body, headers but
// hop-by-hop and X-Ctxgate-*) and its answer comes back unchanged (status,
// body, headers but X-Ctxgate-*), with the base URL in either form.
func TestPassthrough(t *testing.T) {
	type seen struct {
		method, uri string
		header      http.Header
		body        []byte
	}
	got := make(chan seen, 1)
	up := rawUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Header.Clone(), b}
		switch r.URL.Path {
		case "/v1/models":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Request-Id", "req-1")
			w.Header().Set("X-Ctxgate-Action", "inject") // forged: removed
			io.WriteString(w, `{"object":"list","data":[{"id":"m1","object":"model","created":1,"owned_by":"me"}]}`)
		case "/v1/embeddings":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,-1e-3]}],"model":"e","usage":{"prompt_tokens":1,"total_tokens":1}}`)
		case "/v1/files/f1":
			w.WriteHeader(http.StatusNoContent)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"message":"Unknown request URL","type":"invalid_request_error","param":null,"code":"unknown_url"}}`)
		}
	})
	for _, base := range []string{up.URL, up.URL + "/v1"} {
		s := start(t, Options{Upstream: base})
		for _, c := range []struct {
			method, path string
			body         string
			status       int
			want         string // the answer body; "" for none
		}{
			{"GET", "/v1/models", "", 200, `{"object":"list","data":[{"id":"m1","object":"model","created":1,"owned_by":"me"}]}`},
			{"POST", "/v1/embeddings", `{"model":"e","input":"x","documents":[1]}`, 200, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,-1e-3]}],"model":"e","usage":{"prompt_tokens":1,"total_tokens":1}}`},
			{"DELETE", "/v1/files/f1", "", 204, ""},
			{"POST", "/v1/some/new/api?x=1&y=%2F", `{"a":1}`, 404, `{"error":{"message":"Unknown request URL","type":"invalid_request_error","param":null,"code":"unknown_url"}}`},
			{"GET", "/v1/chat/completions?limit=3", "", 404, `{"error":{"message":"Unknown request URL","type":"invalid_request_error","param":null,"code":"unknown_url"}}`},
		} {
			var body []byte
			if c.body != "" {
				body = []byte(c.body)
			}
			r := do(t, c.method, s.url+c.path, body, "Authorization", "Bearer sk-1", "OpenAI-Organization", "org-1",
				"X-Ctxgate-Action", "refuse", "Connection", "X-Drop", "X-Drop", "1")
			if r.status != c.status || string(r.body) != c.want {
				t.Fatalf("%s %s %s: %d %s", base, c.method, c.path, r.status, r.body)
			}
			if r.header.Get(HeaderAction) != "" {
				t.Errorf("%s: an upstream's X-Ctxgate-Action reached the client", c.path)
			}
			sn := <-got
			if sn.method != c.method || sn.uri != c.path || string(sn.body) != c.body {
				t.Errorf("upstream saw %s %s %q, want %s %s %q", sn.method, sn.uri, sn.body, c.method, c.path, c.body)
			}
			if sn.header.Get("Authorization") != "Bearer sk-1" || sn.header.Get("OpenAI-Organization") != "org-1" ||
				sn.header.Get("X-Ctxgate-Action") != "" || sn.header.Get("X-Drop") != "" {
				t.Errorf("upstream headers %v", sn.header)
			}
		}
		r := do(t, "GET", s.url+"/v1/models", nil)
		<-got
		if r.header.Get("X-Request-Id") != "req-1" || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("answer headers %v", r.header)
		}
	}
	// Without an upstream there is nothing to pass to: the gate API's 404.
	s := start(t, Options{})
	wantError(t, do(t, "GET", s.url+"/v1/models", nil), 404, codeNotFound, "")
}

// TestPassthroughEncoding: the client's Accept-Encoding goes upstream, and a
// compressed answer comes back compressed, byte for byte.
func TestPassthroughEncoding(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	io.WriteString(zw, `{"object":"list","data":[]}`)
	zw.Close()
	up := newUpstream(t, "")
	up.handler = func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "gzip" {
			http.Error(w, "no gzip", 400)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/json")
		w.Write(zipped.Bytes())
	}
	s := start(t, Options{Upstream: up.ts.URL})
	req, _ := http.NewRequest("GET", s.url+"/v1/models", nil)
	req.Header.Set("Accept-Encoding", "gzip") // set by hand: the transport does not decompress
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(b, zipped.Bytes()) {
		t.Fatalf("%d %v: %q", resp.StatusCode, resp.Header, b)
	}
}

// TestPassthroughStreaming: a passed-through body is relayed as it comes in
// both directions. The upstream holds the rest of its answer until the
// client has read the first part, and reads the request body while the
// client is still sending it; a proxy that buffered either way would
// deadlock here (and time out).
func TestPassthroughStreaming(t *testing.T) {
	firstRead := make(chan struct{})
	gotFirstPart := make(chan struct{})
	up := rawUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		br := bufio.NewReader(r.Body)
		if line, err := br.ReadString('\n'); err != nil || line != "part 1\n" {
			http.Error(w, "first part: "+line, 400)
			return
		}
		close(gotFirstPart)
		rest, _ := io.ReadAll(br)
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"n":1,"rest":"`+strings.TrimSpace(string(rest))+`"}`+"\n")
		w.(http.Flusher).Flush()
		select {
		case <-firstRead:
		case <-time.After(5 * time.Second):
			return
		}
		io.WriteString(w, `{"n":2}`+"\n")
	})
	s := start(t, Options{Upstream: up.URL})
	pr, pw := io.Pipe()
	go func() {
		io.WriteString(pw, "part 1\n")
		select {
		case <-gotFirstPart:
		case <-time.After(5 * time.Second):
		}
		io.WriteString(pw, "part 2\n")
		pw.Close()
	}()
	resp, err := http.Post(s.url+"/v1/batches/stream", "text/plain", pr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != `{"n":1,"rest":"part 2"}`+"\n" {
		t.Fatalf("first line %q: %v (status %d)", line, err, resp.StatusCode)
	}
	close(firstRead)
	rest, _ := io.ReadAll(br)
	if string(rest) != `{"n":2}`+"\n" {
		t.Fatalf("rest %q", rest)
	}
}

// TestPassthroughUnreachable: a pass-through to an upstream that cannot be
// reached is OpenAI's error shape, 502, naming no address.
func TestPassthroughUnreachable(t *testing.T) {
	up := newUpstream(t, "")
	addr := up.ts.Listener.Addr().String()
	up.ts.Close()
	s := start(t, Options{Upstream: "http://" + addr + "/v1"})
	r := do(t, "GET", s.url+"/v1/models", nil)
	wantGatewayError(t, r, 502, codeUpstream, "")
	if strings.Contains(string(r.body), addr) {
		t.Fatalf("the error names the upstream: %s", r.body)
	}
	if got := metricValue(t, scrape(t, s), "ctxgate_upstream_seconds", "route", "passthrough", "outcome", "error"); got != 1 {
		t.Errorf("upstream error outcome %v", got)
	}
}

// TestGatedTrailingSlash: a POST to a gated endpoint spelled with a
// trailing slash is gated too, never passed to the model ungated.
func TestGatedTrailingSlash(t *testing.T) {
	up := newUpstream(t, "Open Settings [S1].")
	s := start(t, Options{Upstream: up.ts.URL})
	chat, _ := chatFor(t, request(t, "default", "refuse_off_topic"), false)
	r := post(t, s.url+"/v1/chat/completions/", chat)
	if r.status != 200 || r.header.Get(HeaderAction) != "refuse" || up.calls.Load() != 0 {
		t.Fatalf("%d action %q calls %d", r.status, r.header.Get(HeaderAction), up.calls.Load())
	}
}

// TestStripRetrieval: what fail-open and gating-off send upstream.
func TestStripRetrieval(t *testing.T) {
	tests := []struct {
		body, docs, want string
	}{
		{`{"model":"m","documents":[1],"messages":[]}`, "documents", `{"model":"m","messages":[]}`},
		{`{"model":"m", "ctxgate":{"chunks":[]}, "temperature":1.0E0}`, "documents", `{"model":"m","temperature":1.0E0}`},
		{`{"extra":{"k":1,"docs":[2]},"docum\u0065nts":[]}`, "extra.docs", `{"extra":{"k":1},"docum\u0065nts":[]}`},
		{`{"docum\u0065nts":[]}`, "documents", `{}`},
		{`{"model":"m"}`, "documents", `{"model":"m"}`},
		// Not readable, so its documents cannot be found: not forwarded.
		{`{"model":`, "documents", ``},
		{`[1]`, "documents", ``},
		{`{"documents":[1],"documents":[2]}`, "documents", ``},
		{`{"documents":[1],"temperature":NaN}`, "documents", ``},
	}
	for _, tt := range tests {
		got, ok := stripRetrieval([]byte(tt.body), strings.Split(tt.docs, "."))
		if string(got) != tt.want || ok != (tt.want != "") {
			t.Errorf("stripRetrieval(%s, %s) = %s, %v, want %s", tt.body, tt.docs, got, ok, tt.want)
		}
	}
}

// TestUpstreamOutcomes: upstream exchanges are counted by what came back:
// its status class (429 apart) or, without one, timeout or error. A 429 or
// a 500 is relayed, not counted as a success.
func TestUpstreamOutcomes(t *testing.T) {
	status := make(chan int, 1)
	up := newUpstream(t, "")
	up.handler = func(w http.ResponseWriter, r *http.Request) {
		code := <-status
		if code == 0 {
			time.Sleep(300 * time.Millisecond) // past upstream_timeout
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, `{"error":{"message":"x"}}`)
	}
	s := start(t, Options{Upstream: up.ts.URL, UpstreamTimeout: 100 * time.Millisecond})
	chat, _ := chatFor(t, request(t, "default", "inject"), false)
	for _, code := range []int{429, 500, 503, 404, 0} {
		status <- code
		r := post(t, s.url+"/v1/chat/completions", chat)
		if code != 0 && r.status != code {
			t.Fatalf("upstream %d relayed as %d", code, r.status)
		}
	}
	f := scrape(t, s)
	for outcome, want := range map[string]float64{"429": 1, "5xx": 2, "4xx": 1, "timeout": 1} {
		if got := metricValue(t, f, "ctxgate_upstream_seconds", "route", "chat_completions", "outcome", outcome); got != want {
			t.Errorf("outcome %s = %v, want %v", outcome, got, want)
		}
	}
}
