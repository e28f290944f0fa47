package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type accessLine struct {
	Time       time.Time
	Level      string
	Msg        string
	Method     string
	Path       string
	Route      string
	Status     int
	Bytes      int64
	DurationMS *float64 `json:"duration_ms"`
	DecisionID string   `json:"decision_id"`
	Action     string
	Remote     string
	Error      string
	Aborted    bool
}

func accessLines(t testing.TB, b []byte) []accessLine {
	t.Helper()
	var out []accessLine
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var a accessLine
		dec := json.NewDecoder(bytes.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			t.Fatalf("access log line %q: %v", l, err)
		}
		out = append(out, a)
	}
	return out
}

// TestAccessLog: one JSON line per request, whatever became of it: a
// decision, a gated chat request, a pass-through, a 404, a 502 from an
// unreachable upstream, a response aborted mid-answer.
func TestAccessLog(t *testing.T) {
	up := newUpstream(t, "Open Settings [S1].")
	logs := &syncBuffer{}
	s := start(t, Options{Upstream: up.ts.URL, AccessLog: logs})
	g := post(t, s.url+"/v1/gate", request(t, "default", "inject"))
	chat, _ := chatFor(t, request(t, "default", "caveat"), false)
	c := post(t, s.url+"/v1/chat/completions", chat)
	do(t, "GET", s.url+"/v1/models?limit=1", nil)
	post(t, s.url+"/v1/gate", []byte(`{"query":`))

	dead := newUpstream(t, "")
	addr := dead.ts.URL
	dead.ts.Close()
	logs2 := &syncBuffer{}
	s2 := start(t, Options{Upstream: addr, AccessLog: logs2})
	post(t, s2.url+"/v1/chat/completions", chat)

	eventually(t, "five lines", func() bool {
		return strings.Count(logs.String(), "\n") == 4 && strings.Count(logs2.String(), "\n") == 1
	})
	lines := accessLines(t, []byte(logs.String()))
	want := []accessLine{
		{Method: "POST", Path: "/v1/gate", Route: "gate", Status: 200, Bytes: int64(len(g.body)), DecisionID: g.header.Get(HeaderDecisionID), Action: "inject"},
		{Method: "POST", Path: "/v1/chat/completions", Route: "chat_completions", Status: 200, Bytes: int64(len(c.body)), DecisionID: c.header.Get(HeaderDecisionID), Action: "caveat"},
		{Method: "GET", Path: "/v1/models", Route: "passthrough", Status: 200},
		{Method: "POST", Path: "/v1/gate", Route: "gate", Status: 400, Error: "bad_json"},
	}
	for i, w := range want {
		l := lines[i]
		if l.Msg != "request" || l.Level != "INFO" || time.Since(l.Time) > time.Minute || l.DurationMS == nil || *l.DurationMS < 0 || !strings.HasPrefix(l.Remote, "127.0.0.1:") {
			t.Errorf("line %d: %+v", i, l)
		}
		l.Time, l.Level, l.Msg, l.DurationMS, l.Remote = time.Time{}, "", "", nil, ""
		if w.Bytes == 0 {
			l.Bytes = 0
		}
		if l != w {
			t.Errorf("line %d:\n got %+v\nwant %+v", i, l, w)
		}
	}
	l := accessLines(t, []byte(logs2.String()))[0]
	if l.Status != 502 || l.Error != codeUpstream || l.Route != "chat_completions" || l.DecisionID == "" || l.Action != "caveat" || l.Bytes == 0 {
		t.Errorf("502 line %+v", l)
	}
	// The same requests, counted.
	f := scrape(t, s)
	if got := metricValue(t, f, "ctxgate_http_requests_total", "route", "passthrough", "code", "2xx"); got != 1 {
		t.Errorf("passthrough 2xx = %v", got)
	}
}

// TestAccessLogAborted: a response cut off mid-answer is logged as aborted.
func TestAccessLogAborted(t *testing.T) {
	up := stallingUpstream(t, "application/json", `{"id":"x","choices":[`, "")
	logs := &syncBuffer{}
	// Ungated and over max_response_bytes, the answer is relayed as it
	// comes: the stall cuts it after its first bytes.
	s := start(t, Options{Upstream: up.ts.URL, AccessLog: logs, UpstreamIdleTimeout: 300 * time.Millisecond, MaxResponseBytes: 8})
	noHang(t, s.url+"/v1/chat/completions", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	eventually(t, "the line", func() bool { return strings.Contains(logs.String(), "\n") })
	l := accessLines(t, []byte(logs.String()))[0]
	if !l.Aborted || l.Status != 200 || l.Action != "skip" {
		t.Errorf("aborted line %+v", l)
	}
	if got := metricValue(t, scrape(t, s), "ctxgate_http_requests_total", "route", "chat_completions", "code", "aborted"); got != 1 {
		t.Errorf("aborted = %v", got)
	}
}

// TestOpenAccessLog: the destinations, and a file reopened after a
// rename-based rotation.
func TestOpenAccessLog(t *testing.T) {
	var out, errw bytes.Buffer
	for dest, want := range map[string]any{"stdout": &out, "-": &out, "stderr": &errw} {
		if w, err := OpenAccessLog(dest, &out, &errw, LogRotation{}); err != nil || w != want {
			t.Errorf("%s: %v %v", dest, w, err)
		}
	}
	for _, dest := range []string{"", "off"} {
		if w, err := OpenAccessLog(dest, &out, &errw, LogRotation{}); err != nil || w != nil {
			t.Errorf("%q: %v %v", dest, w, err)
		}
	}
	if _, err := OpenAccessLog(filepath.Join(t.TempDir(), "no", "such", "dir"), &out, &errw, LogRotation{}); err == nil || !strings.Contains(err.Error(), "access_log") {
		t.Errorf("bad path: %v", err)
	}

	// A line a crash left torn is cut off before the first line lands.
	path := filepath.Join(t.TempDir(), "access.log")
	os.WriteFile(path, []byte(`{"msg":"request","path":"/before"}`+"\n"+`{"msg":"requ`), 0o644)
	w, err := OpenAccessLog(path, &out, &errw, LogRotation{})
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, Options{AccessLog: w})
	do(t, http.MethodGet, s.url+"/healthz", nil)
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := s.ReopenAccessLog(); err != nil {
		t.Fatal(err)
	}
	do(t, http.MethodGet, s.url+"/v1/policy", nil)
	eventually(t, "the second line", func() bool {
		b, _ := os.ReadFile(path)
		return bytes.Contains(b, []byte(`"path":"/v1/policy"`))
	})
	old, _ := os.ReadFile(path + ".1")
	if !bytes.Contains(old, []byte(`"path":"/healthz"`)) || bytes.Contains(old, []byte("/v1/policy")) {
		t.Errorf("rotated file %s", old)
	}
	if !bytes.HasPrefix(old, []byte(`{"msg":"request","path":"/before"}`+"\n{")) || bytes.Contains(old, []byte(`{"msg":"requ{`)) {
		t.Errorf("the torn line was not cut:\n%s", old)
	}
}
