package server

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestReadTimeout: a client that stops sending its body gets 408 when the
// read timeout passes, instead of holding a connection and a goroutine.
func TestReadTimeout(t *testing.T) {
	s := start(t, Options{ReadTimeout: 200 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /v1/gate HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"query\":")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer after the read timeout: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	wantError(t, reply{resp.StatusCode, resp.Header, b}, 408, codeReadTimeout, "")
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("answered after %v, before the read timeout", d)
	}
}

// TestWriteTimeout: an answer that cannot be written within the write
// timeout is not delivered (here: an upstream slower than the timeout): the
// client gets a 504 or a cut connection, never the late answer.
func TestWriteTimeout(t *testing.T) {
	up := newUpstream(t, "late")
	up.handler = func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(600 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, completion("late"))
	}
	s := start(t, Options{Upstream: up.ts.URL, WriteTimeout: 200 * time.Millisecond})
	chat, _ := chatFor(t, request(t, "default", "inject"), false)
	resp, err := http.Post(s.url+"/v1/chat/completions", "application/json", bytes.NewReader(chat))
	if err == nil {
		b, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if rerr == nil && resp.StatusCode != 504 {
			t.Fatalf("got a complete answer after the write timeout: %d %s", resp.StatusCode, b)
		}
	}
}

// TestGateDeadline: a gate call that cannot finish within the gate deadline
// is 503 with code timeout (and Retry-After), not a hung request.
func TestGateDeadline(t *testing.T) {
	s := start(t, Options{GateTimeout: time.Nanosecond})
	r := post(t, s.url+"/v1/gate", request(t, "default", "inject"))
	wantError(t, r, 503, codeTimeout, "")
	if r.header.Get("Retry-After") == "" {
		t.Error("no Retry-After on 503")
	}
}

// TestUpstreamTimeout: an upstream that sends no headers within the
// upstream timeout is a 504 that does not name the upstream.
func TestUpstreamTimeout(t *testing.T) {
	up := newUpstream(t, "")
	release := make(chan struct{})
	up.handler = func(w http.ResponseWriter, r *http.Request) { <-release }
	defer close(release)
	s := start(t, Options{Upstream: up.ts.URL, UpstreamTimeout: 100 * time.Millisecond})
	chat, _ := chatFor(t, request(t, "default", "inject"), false)
	r := post(t, s.url+"/v1/chat/completions", chat)
	wantGatewayError(t, r, 504, codeUpstreamTimeout, "")
	if strings.Contains(string(r.body), up.ts.Listener.Addr().String()) {
		t.Fatalf("504 names the upstream: %s", r.body)
	}
}

// TestGracefulShutdown: Shutdown stops accepting, lets the request in flight
// finish with its full answer, and only then returns.
func TestGracefulShutdown(t *testing.T) {
	up := newUpstream(t, "")
	arrived, release := make(chan struct{}), make(chan struct{})
	up.handler = func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-release
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, completion("Open Settings [S1]."))
	}
	s := start(t, Options{Upstream: up.ts.URL})
	chat, _ := chatFor(t, request(t, "default", "inject"), false)
	got := make(chan reply, 1)
	go func() {
		resp, err := http.Post(s.url+"/v1/chat/completions", "application/json", bytes.NewReader(chat))
		if err != nil {
			t.Errorf("in-flight request failed: %v", err)
			got <- reply{}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- reply{resp.StatusCode, resp.Header, b}
	}()
	<-arrived
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned (%v) with a request in flight", err)
	case <-time.After(200 * time.Millisecond):
	}
	// No new connections are accepted while draining.
	if c, err := net.DialTimeout("tcp", strings.TrimPrefix(s.url, "http://"), time.Second); err == nil {
		c.Close()
		t.Fatal("a new connection was accepted during shutdown")
	}
	close(release)
	r := <-got
	if r.status != 200 || !bytes.Contains(r.body, []byte("Open Settings [S1].")) || !bytes.Contains(r.body, []byte(`"sufficiency"`)) {
		t.Fatalf("in-flight request: %d %s", r.status, r.body)
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if s.cur.Load() != nil {
		t.Fatal("the gate is still loaded after Shutdown")
	}
}

// TestShutdownDeadline: Shutdown gives up when its context ends first.
func TestShutdownDeadline(t *testing.T) {
	up := newUpstream(t, "")
	arrived, release := make(chan struct{}), make(chan struct{})
	up.handler = func(w http.ResponseWriter, r *http.Request) { close(arrived); <-release }
	defer close(release)
	s := start(t, Options{Upstream: up.ts.URL})
	chat, _ := chatFor(t, request(t, "default", "inject"), false)
	go http.Post(s.url+"/v1/chat/completions", "application/json", bytes.NewReader(chat))
	<-arrived
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Shutdown = %v, want the context's deadline", err)
	}
}
