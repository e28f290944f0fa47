package server

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// stallingUpstream answers with head (status, content type, the first
// bytes), then sends nothing more until the test ends: a body that never
// finishes. drip, when set, is sent every 50 ms instead of nothing.
func stallingUpstream(t *testing.T, ctype, first, drip string) *upstream {
	up := newUpstream(t, "")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // before the upstream's own Close
	up.handler = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(200)
		io.WriteString(w, first)
		w.(http.Flusher).Flush()
		for {
			select {
			case <-release:
				return
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
				if drip != "" {
					io.WriteString(w, drip)
					w.(http.Flusher).Flush()
				}
			}
		}
	}
	return up
}

// noHang posts with a client deadline far past every server bound, so a
// handler held by its upstream fails the test instead of passing slowly.
func noHang(t *testing.T, url string, body []byte) (*http.Response, []byte, error) {
	t.Helper()
	c := &http.Client{Timeout: 60 * time.Second}
	resp, err := c.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST: %v (a handler hung on its upstream?)", err)
	}
	defer resp.Body.Close()
	b, rerr := io.ReadAll(resp.Body)
	return resp, b, rerr
}

// TestUpstreamStalledBody: an upstream that sends its headers and then
// stalls (or drips) no longer holds the handler: a JSON answer the gate
// checks is a 504, a body already being relayed is aborted, and the cut is
// logged and counted.
func TestUpstreamStalledBody(t *testing.T) {
	gated, _ := chatFor(t, request(t, "default", "inject"), false)
	ungated := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	for _, c := range []struct {
		name, first, drip string
		idle              time.Duration
		body              []byte
		status            int // 0: headers sent, then the transfer is aborted
	}{
		{"checked JSON stalls (idle bound: write_timeout)", `{"id":"x","choices":[`, "", 0, gated, 504},
		{"checked JSON stalls", `{"id":"x","choices":[`, "", 500 * time.Millisecond, gated, 504},
		{"checked JSON drips past write_timeout", `{"id":"x","choices":[`, " ", 500 * time.Millisecond, gated, 504},
		// Ungated and over max_response_bytes: relayed as it comes.
		{"relayed body stalls", `{"id":"x","choices":[`, "", 500 * time.Millisecond, ungated, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := stallingUpstream(t, "application/json", c.first, c.drip)
			opts := Options{Upstream: up.ts.URL, WriteTimeout: 2 * time.Second, UpstreamIdleTimeout: c.idle}
			if c.status == 0 {
				opts.MaxResponseBytes = int64(len(c.first)) - 1
			}
			s := start(t, opts)
			began := time.Now()
			resp, b, err := noHang(t, s.url+"/v1/chat/completions", c.body)
			t.Logf("answered after %v", time.Since(began).Round(time.Millisecond))
			if c.status != 0 {
				if err != nil || resp.StatusCode != c.status {
					t.Fatalf("status %d, err %v: %s", resp.StatusCode, err, b)
				}
				wantGatewayError(t, reply{resp.StatusCode, resp.Header, b}, 504, codeUpstreamTimeout, "")
			} else if err == nil {
				t.Fatalf("a stalled relayed body ended as if complete: %d %q", resp.StatusCode, b)
			}
			if !strings.Contains(s.log.String(), "upstream") || !strings.Contains(s.log.String(), "cut") && !strings.Contains(s.log.String(), "failed") {
				t.Errorf("the cut is not logged:\n%s", s.log.String())
			}
			if got := metricValue(t, scrape(t, s), "ctxgate_upstream_cut_total", "where", "body"); got != 1 {
				t.Errorf("ctxgate_upstream_cut_total{body} = %v, want 1", got)
			}
		})
	}
}

// TestUpstreamStalledStream: a stream that stalls between events, or in the
// middle of one, is cut after upstream_idle_timeout and ends cleanly: the
// complete events, then an error event, then data: [DONE]. The partial event
// never reaches the client.
func TestUpstreamStalledStream(t *testing.T) {
	event := "data: {\"choices\":[{\"delta\":{\"content\":\"Open\"}}]}\n\n"
	for _, c := range []struct{ name, first string }{
		{"between events", event},
		{"mid-event", event + "data: {\"choices\":[{\"del"},
		{"CRLF events", strings.ReplaceAll(event, "\n", "\r\n") + "data: {"},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := stallingUpstream(t, "text/event-stream", c.first, "")
			s := start(t, Options{Upstream: up.ts.URL, WriteTimeout: 30 * time.Second, UpstreamIdleTimeout: 500 * time.Millisecond})
			chat, _ := chatFor(t, request(t, "default", "inject"), true)
			resp, b, err := noHang(t, s.url+"/v1/chat/completions", chat)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("status %d, err %v", resp.StatusCode, err)
			}
			whole := strings.TrimSuffix(c.first, c.first[len(eventsEndString(c.first)):])
			rest, ok := strings.CutPrefix(string(b), whole)
			if !ok {
				t.Fatalf("the complete events were not relayed first: %q", b)
			}
			if !strings.HasPrefix(rest, `data: {"error":{"message":`) || !strings.Contains(rest, `"code":"upstream_timeout"`) ||
				!strings.HasSuffix(rest, "}}\n\ndata: [DONE]\n\n") || strings.Count(rest, "\n\n") != 2 {
				t.Fatalf("the stream did not end with an error event and [DONE]: %q", rest)
			}
			if got := metricValue(t, scrape(t, s), "ctxgate_upstream_cut_total", "where", "stream"); got != 1 {
				t.Errorf("ctxgate_upstream_cut_total{stream} = %v, want 1", got)
			}
		})
	}
	// A stream that keeps sending is not cut, however long it runs.
	up := newUpstream(t, "")
	up.handler = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 12; i++ {
			io.WriteString(w, event)
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}
	s := start(t, Options{Upstream: up.ts.URL, UpstreamIdleTimeout: 400 * time.Millisecond})
	chat, _ := chatFor(t, request(t, "default", "inject"), true)
	_, b, err := noHang(t, s.url+"/v1/chat/completions", chat)
	// Its events are relayed byte for byte; the gateway adds only its final
	// chunk with the sufficiency object before [DONE].
	if err != nil || !strings.HasPrefix(string(b), strings.Repeat(event, 12)+`data: {"object":"chat.completion.chunk","choices":[],"sufficiency":{`) ||
		!strings.HasSuffix(string(b), "}}\n\ndata: [DONE]\n\n") {
		t.Fatalf("a live stream was altered: %v %q", err, b)
	}
}

func eventsEndString(s string) string { return s[:eventsEnd([]byte(s))] }

func TestEventsEnd(t *testing.T) {
	for in, want := range map[string]int{
		"":                       0,
		"data: x":                0,
		"data: x\n":              0,
		"data: x\n\n":            9,
		"data: x\n\ndata: y":     9,
		"data: x\r\n\r\n":        11,
		"data: x\r\rdata":        9,
		"data: x\n\ndata: y\n\n": 18,
		"\n":                     0,
		"\n\n":                   2,
		"data: x\r\n\r":          10,
	} {
		if got := eventsEnd([]byte(in)); got != want {
			t.Errorf("eventsEnd(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestUpstreamForgedHeaders: X-Ctxgate-* headers are the gate's alone. An
// upstream's own never reach the client (gated or not), and a client's own
// never reach the upstream.
func TestUpstreamForgedHeaders(t *testing.T) {
	up := newUpstream(t, "")
	up.handler = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Ctxgate-Confidence", "0.99")
		w.Header().Set("X-Ctxgate-Refusal", "hard")
		w.Header().Set("x-ctxgate-whatever", "forged")
		w.Header().Set("X-Upstream-Own", "kept")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, completion("Open Settings [S1]."))
	}
	s := start(t, Options{Upstream: up.ts.URL, Policy: PolicySource{Path: "default"}})
	gated, _ := chatFor(t, request(t, "default", "inject"), false)
	want := mustDecision(t, post(t, s.url+"/v1/gate", request(t, "default", "inject")).body)
	for _, c := range []struct {
		name string
		body []byte
	}{{"gated", gated}, {"ungated", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)}} {
		r := post(t, s.url+"/v1/chat/completions", c.body, "X-Ctxgate-Confidence", "0.01", "X-Ctxgate-Forged", "client")
		if r.status != 200 || r.header.Get("X-Upstream-Own") != "kept" {
			t.Fatalf("%s: %d %v", c.name, r.status, r.header)
		}
		if r.header.Get("X-Ctxgate-Whatever") != "" || r.header.Get(HeaderRefusal) != "" {
			t.Errorf("%s: upstream headers reached the client: %v", c.name, r.header)
		}
		conf := r.header.Get(HeaderConfidence)
		if c.name == "gated" && conf != want.confidenceRaw() || c.name == "ungated" && conf != "" {
			t.Errorf("%s: X-Ctxgate-Confidence %q (the decision's: %s)", c.name, conf, want.confidenceRaw())
		}
		_, sent := up.last(t)
		if sent.Get("X-Ctxgate-Forged") != "" || sent.Get(HeaderConfidence) == "0.01" {
			t.Errorf("%s: the client's X-Ctxgate-* headers reached the upstream: %v", c.name, sent)
		}
	}
}

// TestUpstreamErrorsNameNoAddress: a 502 or 504 tells the client what went
// wrong, not where the upstream lives; the log has the address.
func TestUpstreamErrorsNameNoAddress(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	addr := dead.Listener.Addr().String()
	dead.Close()
	s := start(t, Options{Upstream: "http://" + addr})
	chat, _ := chatFor(t, request(t, "default", "inject"), false)
	r := post(t, s.url+"/v1/chat/completions", chat)
	_, _, msg := gatewayErrorOf(t, r)
	host, port, _ := strings.Cut(addr, ":")
	if r.status != 502 || strings.Contains(string(r.body), host) || strings.Contains(string(r.body), port) || strings.Contains(msg, "dial") {
		t.Fatalf("502 names the upstream: %d %s", r.status, r.body)
	}
	if !strings.Contains(s.log.String(), addr) {
		t.Errorf("the log does not name the upstream:\n%s", s.log.String())
	}
}

// TestAnswerCheckOversize: an answer under max_response_bytes but over the
// validator's own limit (the policy's max_request_bytes, 4 MiB) is relayed
// unchecked and reported as skipped-oversize, not as an error of the check.
func TestAnswerCheckOversize(t *testing.T) {
	huge := strings.Repeat("Open Settings and choose Security [S1]. ", 110000) // 4.4 MB
	up := newUpstream(t, huge)
	s := start(t, Options{Upstream: up.ts.URL})
	chat, _ := chatFor(t, request(t, "default", "inject"), false)
	r := post(t, s.url+"/v1/chat/completions", chat)
	if r.status != 200 || r.header.Get(HeaderAnswerCheck) != "skipped-oversize" || !bytes.Contains(r.body, []byte(`"sufficiency":`)) {
		t.Fatalf("%d, answer check %q, %d bytes", r.status, r.header.Get(HeaderAnswerCheck), len(r.body))
	}
	if got := metricValue(t, scrape(t, s), "ctxgate_answer_checks_total", "result", "skipped_oversize"); got != 1 {
		t.Errorf("answer_checks{skipped_oversize} = %v, want 1", got)
	}
}
