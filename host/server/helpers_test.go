package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/internal/testmodules"
	"github.com/ctxgate/ctxgate/policies"
)

// testServer is a Server behind a real listener (httptest) on 127.0.0.1.
type testServer struct {
	*Server
	ts  *httptest.Server
	url string
	log *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs a server on the TinyGo module (unless opts chose another) with
// polling off unless asked, and shuts it down after the test.
func start(t testing.TB, opts Options) *testServer {
	t.Helper()
	if opts.Wasm == nil && !opts.Native {
		opts.Wasm = testmodules.Bytes(t, opts.Module)
	}
	if opts.ReloadPoll == 0 {
		opts.ReloadPoll = -1
	}
	logs := &syncBuffer{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = s.HTTPServer()
	ts.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		ts.Close()
	})
	return &testServer{Server: s, ts: ts, url: ts.URL, log: logs}
}

// policyFile returns the path of a preset policy in the repository.
func policyPath(name string) string { return filepath.Join("..", "..", "policies", name+".json") }

func preset(t testing.TB, name string) []byte {
	t.Helper()
	b, ok := policies.Get(name)
	if !ok {
		t.Fatalf("no preset %q", name)
	}
	return b
}

// request reads testdata/requests/<policy>/<name>.json.
func request(t testing.TB, policy, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", policy, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func do(t testing.TB, method, url string, body []byte, hdr ...string) reply {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

func post(t testing.TB, url string, body []byte, hdr ...string) reply {
	t.Helper()
	return do(t, http.MethodPost, url, body, hdr...)
}

// errorOf decodes the error JSON and checks its shape: exactly
// {"error":{"code","message","field"}}.
func errorOf(t testing.TB, r reply) (code, field, msg string) {
	t.Helper()
	var env map[string]map[string]string
	if err := json.Unmarshal(r.body, &env); err != nil || len(env) != 1 || env["error"] == nil {
		t.Fatalf("status %d: not the error JSON: %s", r.status, r.body)
	}
	e := env["error"]
	for _, k := range []string{"code", "message", "field"} {
		if _, ok := e[k]; !ok {
			t.Fatalf("error JSON lacks %q: %s", k, r.body)
		}
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type = %q", ct)
	}
	return e["code"], e["field"], e["message"]
}

func wantError(t testing.TB, r reply, status int, code, field string) {
	t.Helper()
	c, f, msg := errorOf(t, r)
	if r.status != status || c != code || f != field {
		t.Fatalf("got %d %s field %q (%s), want %d %s field %q", r.status, c, f, msg, status, code, field)
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode %s: %v", truncate(b), err)
	}
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// hammer runs fn in a loop on n goroutines until the returned stop is
// called; stop waits for them.
func hammer(n int, fn func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				fn()
			}
		}()
	}
	return func() { close(done); wg.Wait() }
}

// eventually polls cond until it holds or the time is up.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func mustDecision(t testing.TB, b []byte) *decisionView {
	t.Helper()
	d, err := parseDecision(b)
	if err != nil {
		t.Fatalf("not a decision: %v: %s", err, truncate(b))
	}
	return d
}

// gatewayErrorOf decodes a gateway error and checks its shape: exactly
// OpenAI's {"error":{"message","type","param","code"}}, type matching the
// status class. param is "" when it is null.
func gatewayErrorOf(t testing.TB, r reply) (code, param, msg string) {
	t.Helper()
	var env map[string]map[string]*string
	if err := json.Unmarshal(r.body, &env); err != nil || len(env) != 1 || env["error"] == nil || len(env["error"]) != 4 {
		t.Fatalf("status %d: not OpenAI's error shape: %s", r.status, r.body)
	}
	e := env["error"]
	for _, k := range []string{"message", "type", "code"} {
		if e[k] == nil {
			t.Fatalf("error lacks %q (or it is null): %s", k, r.body)
		}
	}
	if _, ok := e["param"]; !ok {
		t.Fatalf("error lacks param: %s", r.body)
	}
	wantType := "invalid_request_error"
	if r.status >= 500 {
		wantType = "server_error"
	}
	if *e["type"] != wantType {
		t.Errorf("status %d: type %q, want %q", r.status, *e["type"], wantType)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type = %q", ct)
	}
	if e["param"] != nil {
		param = *e["param"]
	}
	return *e["code"], param, *e["message"]
}

func wantGatewayError(t testing.TB, r reply, status int, code, param string) {
	t.Helper()
	c, p, msg := gatewayErrorOf(t, r)
	if r.status != status || c != code || p != param {
		t.Fatalf("got %d %s param %q (%s), want %d %s param %q", r.status, c, p, msg, status, code, param)
	}
}
