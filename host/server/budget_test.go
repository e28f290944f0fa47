package server

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/wire"
)

// TestGateAPIReadsPolicyLimit: /v1/gate and /v1/validate read no more of a
// body than the policy's max_request_bytes (here 4 KiB, under max_body_bytes):
// a longer declared body is refused before it is read, a chunked one once it
// passes the limit, with the gate's own limit error; one at the limit is
// read. A policy that raises max_request_bytes raises what is read.
func TestGateAPIReadsPolicyLimit(t *testing.T) {
	var p map[string]any
	decode(t, preset(t, "default"), &p)
	p["limits"] = map[string]any{"max_request_bytes": 4096}
	path := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(path, mustJSON(t, p), 0o644)
	s := start(t, Options{Policy: PolicySource{Path: path}})
	for _, c := range []struct{ path, what string }{{"/v1/gate", "request"}, {"/v1/validate", "answer"}} {
		over := []byte(`{"query":"` + strings.Repeat("a", 5000) + `"}`)
		want := wire.LimitError("", c.what+" is "+strconv.Itoa(len(over))+" bytes", 4096, "max_request_bytes")
		r := post(t, s.url+c.path, over)
		_, _, msg := errorOf(t, r)
		wantError(t, r, 413, "limit", "")
		if msg != want.Message {
			t.Errorf("%s: %q, want the gate's %q", c.path, msg, want.Message)
		}
		// Chunked: cut off once past the limit.
		req, _ := http.NewRequest(http.MethodPost, s.url+c.path, struct{ io.Reader }{bytes.NewReader(over)})
		req.ContentLength = -1
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		wantError(t, reply{resp.StatusCode, resp.Header, b}, 413, "limit", "")
		if !strings.Contains(string(b), "more than 4096 bytes") {
			t.Errorf("%s chunked: %s", c.path, b)
		}
	}
	at := append([]byte(`{"query":"how do I reset my password","chunks":[{"id":"a","text":"`), bytes.Repeat([]byte("reset "), 600)...)
	at = append(at, `"}]}`...)
	at = append(at, bytes.Repeat([]byte(" "), 4096-len(at))...)
	if r := post(t, s.url+"/v1/gate", at); r.status != 200 {
		t.Fatalf("a request of exactly max_request_bytes: %d %s", r.status, r.body)
	}
}

// TestValidateIDBeforeBody: /v1/validate refuses an id it did not issue
// before it reads any of the body (a declared 1 MiB never sent is answered
// 404 at once), and a soft refusal with a real id over max_request_bytes
// is the gate's 413 and logs no gap event.
func TestValidateIDBeforeBody(t *testing.T) {
	var p map[string]any
	decode(t, preset(t, "default"), &p)
	p["limits"] = map[string]any{"max_request_bytes": 4096}
	path := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(path, mustJSON(t, p), 0o644)
	s := start(t, Options{Policy: PolicySource{Path: path}, GapLog: filepath.Join(t.TempDir(), "gaps.jsonl")})

	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /v1/validate HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"+
		HeaderDecisionID+": AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r\nContent-Length: 1048576\r\n\r\n{")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	wantError(t, reply{resp.StatusCode, resp.Header, b}, 404, "not_found", HeaderDecisionID)

	id := post(t, s.url+"/v1/gate", request(t, "default", "caveat")).header.Get(HeaderDecisionID)
	before := len(readGaps(t, s))
	answer := mustJSON(t, map[string]any{"answer": refusalLine(t, "default") + strings.Repeat(" ", 5000), "tags": []string{"S1"}})
	wantError(t, post(t, s.url+"/v1/validate", answer, HeaderDecisionID, id), 413, "limit", "")
	if evs := readGaps(t, s); len(evs) != before {
		t.Errorf("a refused answer logged %d gap events: %+v", len(evs)-before, evs[before:])
	}
}

// TestInflightBodyBudget: the bodies held at once are bounded by
// max_inflight_body_bytes. While one connection holds most of the budget
// (a body it has sent all but its last byte of), a request whose body does
// not fit is answered 503 overloaded with Retry-After, and the gateway
// never reads the rest of it; once the first is done, the budget is whole
// again (ctxgate_inflight_body_bytes 0) and the same request is answered.
func TestInflightBodyBudget(t *testing.T) {
	up := newUpstream(t, "Open Settings [S1].")
	s := start(t, Options{Upstream: up.ts.URL, MaxInflightBodyBytes: 1 << 20})
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	first := append([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"x":"`), bytes.Repeat([]byte("x"), 900<<10)...)
	first = append(first, `"}`...)
	io.WriteString(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: "+
		strconv.Itoa(len(first))+"\r\n\r\n")
	conn.Write(first[:len(first)-1])
	eventually(t, "the first body held", func() bool { return s.bodies.inUse() >= 900<<10 })

	second := append([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"x":"`), bytes.Repeat([]byte("y"), 300<<10)...)
	second = append(second, `"}`...)
	r := post(t, s.url+"/v1/chat/completions", second)
	wantGatewayError(t, r, 503, codeOverloaded, "")
	if r.header.Get("Retry-After") == "" {
		t.Error("503 overloaded without Retry-After")
	}
	for _, path := range []string{"/v1/gate", "/v1/validate"} {
		big := append([]byte(`{"query":"`), bytes.Repeat([]byte("q"), 200<<10)...)
		wantError(t, post(t, s.url+path, append(big, `"}`...)), 503, codeOverloaded, "")
	}

	conn.Write(first[len(first)-1:])
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the first request: %v %v", resp, err)
	}
	resp.Body.Close()
	if r := post(t, s.url+"/v1/chat/completions", second); r.status != 200 {
		t.Fatalf("after the first: %d %s", r.status, r.body)
	}
	eventually(t, "the budget whole again", func() bool {
		return metricValue(t, scrape(t, s), "ctxgate_inflight_body_bytes") == 0
	})
}

// TestReleasingBody: the body sent upstream gives back its share of the
// budget, and lets go of its bytes, once it has been read.
func TestReleasingBody(t *testing.T) {
	b := &bodyBudget{max: 1 << 20}
	body, held, err := b.readHeld(bytes.NewReader(bytes.Repeat([]byte("a"), 100<<10)), -1, 1<<20)
	if err != nil || len(body) != 100<<10 || b.inUse() < 100<<10 {
		t.Fatalf("read %d, in use %d, %v", len(body), b.inUse(), err)
	}
	rb := &releasingBody{b: body, held: held}
	got, _ := io.ReadAll(io.LimitReader(rb, 50<<10))
	if len(got) != 50<<10 || b.inUse() == 0 {
		t.Fatalf("released before the end: %d read, %d in use", len(got), b.inUse())
	}
	rest, err := io.ReadAll(rb)
	if err != nil || len(rest) != 50<<10 || b.inUse() != 0 || rb.b != nil {
		t.Fatalf("after the end: %d read, %d in use, %v", len(rest), b.inUse(), err)
	}
	// Over the budget: refused, nothing kept.
	if _, _, err := b.readHeld(bytes.NewReader(make([]byte, 2<<20)), -1, 4<<20); err != errOverloaded || b.inUse() != 0 {
		t.Fatalf("over the budget: %v, %d in use", err, b.inUse())
	}
	held.release() // twice is once
	if b.inUse() != 0 {
		t.Fatal("released twice")
	}
}
