package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// upstream stands in for the LLM: it records what reached it and answers
// with answer (a chat.completion JSON) unless handler is set.
type upstream struct {
	ts      *httptest.Server
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
	calls   atomic.Int64
	answer  string
	handler http.HandlerFunc
}

func newUpstream(t testing.TB, answer string) *upstream {
	u := &upstream{answer: answer}
	u.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.bodies, u.headers = append(u.bodies, b), append(u.headers, r.Header.Clone())
		u.mu.Unlock()
		u.calls.Add(1)
		if u.handler != nil {
			u.handler(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, completion(u.answer))
	}))
	t.Cleanup(u.ts.Close)
	return u
}

func (u *upstream) last(t testing.TB) ([]byte, http.Header) {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.bodies) == 0 {
		t.Fatal("the upstream was not called")
	}
	return u.bodies[len(u.bodies)-1], u.headers[len(u.headers)-1]
}

func completion(content string) string {
	c, _ := json.Marshal(content)
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"test-model","choices":[{"index":0,"message":{"role":"assistant","content":` +
		string(c) + `},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`
}

// chatFor turns a golden gate request into a chat body: the question as the
// last user message, chunks as "documents" (or, when the request has other
// members, everything in the "ctxgate" extension).
func chatFor(t testing.TB, gateReq []byte, stream bool) ([]byte, string) {
	t.Helper()
	var m map[string]json.RawMessage
	decode(t, gateReq, &m)
	var q string
	decode(t, m["query"], &q)
	delete(m, "query")
	body := map[string]any{
		"model": "test-model",
		"messages": []map[string]string{
			{"role": "system", "content": "You are the support bot."},
			{"role": "user", "content": q},
		},
		"temperature": 0.2,
	}
	if stream {
		body["stream"] = true
	}
	if len(m) == 1 && m["chunks"] != nil {
		body["documents"] = m["chunks"]
	} else {
		body["ctxgate"] = m
	}
	return mustJSON(t, body), q
}

type chatMsg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type sentBody struct {
	Model       string          `json:"model"`
	Messages    []chatMsg       `json:"messages"`
	Temperature float64         `json:"temperature"`
	Documents   json.RawMessage `json:"documents"`
	Ctxgate     json.RawMessage `json:"ctxgate"`
}

// TestGatewayActions drives the four actions end to end: the body the
// upstream receives, the reply, the headers, against the decision /v1/gate
// gives for the same request.
func TestGatewayActions(t *testing.T) {
	cases := []struct {
		policy, request, action string
	}{
		{"default", "inject", "inject"},
		{"default", "caveat", "caveat"},
		{"wikigr", "fallback_low_similarity", "fallback"},
		{"default", "refuse_off_topic", "refuse"},
		{"support-agent", "untrusted_fenced_and_escaped", ""}, // extension form (now, trust)
	}
	for _, tc := range cases {
		t.Run(tc.policy+"/"+tc.request, func(t *testing.T) {
			up := newUpstream(t, "Open Settings, choose Security [S1].")
			s := start(t, Options{Policy: PolicySource{Path: tc.policy}, Upstream: up.ts.URL})
			gateReq := request(t, tc.policy, tc.request)
			g := post(t, s.url+"/v1/gate", gateReq)
			d := mustDecision(t, g.body)
			if tc.action != "" && d.Action != tc.action {
				t.Fatalf("golden request decides %s, want %s", d.Action, tc.action)
			}
			chat, q := chatFor(t, gateReq, false)
			r := post(t, s.url+"/v1/chat/completions", chat, "Authorization", "Bearer sk-test")
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			for h, v := range map[string]string{HeaderAction: d.Action, HeaderLevel: d.Level, HeaderConfidence: d.confidenceRaw(), HeaderPolicy: d.Policy.label()} {
				if got := r.header.Get(h); got != v {
					t.Errorf("reply %s = %q, want %q", h, got, v)
				}
			}
			if r.header.Get(HeaderDecisionID) == "" {
				t.Error("no decision id")
			}
			var reply struct {
				Object  string
				Choices []struct{ Message chatMsg }
				Suff    *struct {
					Score   float64  `json:"score"`
					Level   string   `json:"level"`
					Factors []string `json:"factors"`
				} `json:"sufficiency"`
			}
			decode(t, r.body, &reply)
			if reply.Suff == nil || reply.Suff.Score != d.confidence() || reply.Suff.Level != d.Level || len(reply.Suff.Factors) != len(d.ConfidenceFactors) {
				t.Fatalf("sufficiency = %+v, decision %s/%s", reply.Suff, d.Confidence, d.Level)
			}

			if d.Action == "refuse" {
				if up.calls.Load() != 0 {
					t.Fatal("a hard refusal called the upstream")
				}
				if r.header.Get(HeaderRefusal) != "hard" || reply.Object != "chat.completion" || reply.Choices[0].Message.Content != d.Refusal.Message {
					t.Fatalf("refusal reply %s", r.body)
				}
				return
			}
			sent, hdr := up.last(t)
			var b sentBody
			decode(t, sent, &b)
			if b.Documents != nil || b.Ctxgate != nil {
				t.Fatalf("the retrieved documents reached the upstream: %s", truncate(sent))
			}
			if b.Model != "test-model" || b.Temperature != 0.2 || b.Messages[0].Content != "You are the support bot." {
				t.Fatalf("members not kept: %s", truncate(sent))
			}
			if hdr.Get("Authorization") != "Bearer sk-test" || hdr.Get(HeaderAction) != d.Action {
				t.Fatalf("upstream headers %v", hdr)
			}
			switch d.Action {
			case "inject", "caveat":
				want := d.Prompt.Instructions + "\n\n" + d.Prompt.Sources
				if d.Action == "caveat" {
					want += "\n\n" + d.Caveat
				}
				if len(b.Messages) != 3 || b.Messages[1].Role != "system" || b.Messages[1].Content != want || b.Messages[2] != (chatMsg{"user", q}) {
					t.Fatalf("messages sent %+v\nwant system %q", b.Messages, want)
				}
				if !strings.Contains(b.Messages[1].Content, d.Prompt.Sources) || d.Prompt.Sources == "" {
					t.Fatal("the <sources> block is not the decision's, byte for byte")
				}
				if r.header.Get(HeaderAnswerCheck) != "ok" || r.header.Get(HeaderSoftRefusal) != "false" || r.header.Get(HeaderUncited) != "0" {
					t.Fatalf("answer check headers %v", r.header)
				}
			case "fallback":
				if len(b.Messages) != 2 || b.Messages[1].Role != "user" || b.Messages[1].Content != d.Prompt.Minimal || d.Prompt.Minimal == "" {
					t.Fatalf("fallback messages %+v, want the minimal prompt %q", b.Messages, d.Prompt.Minimal)
				}
			}
			want := "Open Settings, choose Security [S1]."
			if d.Action == "caveat" {
				want = d.Caveat + "\n\n" + want // the default delivery: a prefix
			}
			if reply.Choices[0].Message.Content != want {
				t.Fatalf("answer not relayed: %s", r.body)
			}
		})
	}
}

func TestGatewayRefusalStream(t *testing.T) {
	up := newUpstream(t, "")
	s := start(t, Options{Upstream: up.ts.URL})
	chat, _ := chatFor(t, request(t, "default", "refuse_off_topic"), true)
	r := post(t, s.url+"/v1/chat/completions", chat)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") || up.calls.Load() != 0 {
		t.Fatalf("status %d type %q calls %d", r.status, r.header.Get("Content-Type"), up.calls.Load())
	}
	events := strings.Split(strings.TrimSpace(string(r.body)), "\n\n")
	if len(events) != 4 || events[3] != "data: [DONE]" || !strings.Contains(events[0], `"model":"test-model"`) {
		t.Fatalf("events %q", events)
	}
	// Every chunk has the refusal's own id and time; the last carries the
	// sufficiency object.
	var chunks [3]struct {
		ID      string
		Created int64
		Model   string
		Choices []json.RawMessage
		Suff    *struct{ Level string } `json:"sufficiency"`
	}
	for i := range chunks {
		decode(t, []byte(strings.TrimPrefix(events[i], "data: ")), &chunks[i])
		if !strings.HasPrefix(chunks[i].ID, "chatcmpl-ctxgate-") || chunks[i].ID != chunks[0].ID || chunks[i].Created < time.Now().Add(-time.Minute).Unix() || chunks[i].Model != "test-model" {
			t.Fatalf("chunk %d: %s", i, events[i])
		}
	}
	if chunks[2].Suff == nil || chunks[2].Suff.Level != "insufficient" || len(chunks[2].Choices) != 0 || chunks[1].Suff != nil {
		t.Fatalf("final chunk %s", events[2])
	}
}

// TestGatewaySoftRefusal: an answer that is the policy's refusal line is a
// soft refusal: headers, metric, and a refusal_soft gap event.
func TestGatewaySoftRefusal(t *testing.T) {
	up := newUpstream(t, refusalLine(t, "default"))
	s := start(t, Options{Upstream: up.ts.URL, GapLog: filepath.Join(t.TempDir(), "gaps.jsonl")})
	chat, q := chatFor(t, request(t, "default", "inject"), false)
	r := post(t, s.url+"/v1/chat/completions", chat)
	if r.status != 200 || r.header.Get(HeaderSoftRefusal) != "true" {
		t.Fatalf("status %d soft refusal %q", r.status, r.header.Get(HeaderSoftRefusal))
	}
	evs := readGaps(t, s)
	if len(evs) != 1 || evs[0].Kind != "refusal_soft" || evs[0].Query != q || evs[0].DecisionID != r.header.Get(HeaderDecisionID) || len(evs[0].TopChunks) == 0 {
		t.Fatalf("events %+v", evs)
	}
	// A citation of a tag the prompt never offered is reported.
	up.answer = "Reset it in Settings [S9]."
	r = post(t, s.url+"/v1/chat/completions", chat)
	if r.header.Get(HeaderUnknownCite) != "S9" || r.header.Get(HeaderSoftRefusal) != "false" {
		t.Fatalf("headers %v", r.header)
	}
}

// TestGatewayStream: "stream": true is relayed as it arrives. The upstream
// holds its second event until the client has read the first, so a server
// that buffered the stream would deadlock (and time out) here.
func TestGatewayStream(t *testing.T) {
	up := newUpstream(t, "")
	firstRead := make(chan struct{})
	up.handler = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"Open\"}}]}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-firstRead:
		case <-time.After(5 * time.Second):
			return
		}
		io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\" Settings [S1].\"}}]}\n\ndata: [DONE]\n\n")
	}
	s := start(t, Options{Upstream: up.ts.URL})
	chat, _ := chatFor(t, request(t, "default", "inject"), true)
	resp, err := http.Post(s.url+"/v1/chat/completions", "application/json", bytes.NewReader(chat))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get(HeaderAction) != "inject" || resp.Header.Get(HeaderAnswerCheck) != "skipped-stream" {
		t.Fatalf("headers %v", resp.Header)
	}
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, `"Open"`) {
		t.Fatalf("first event %q: %v", line, err)
	}
	close(firstRead)
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), "Settings [S1]") || !strings.HasSuffix(string(rest), "data: [DONE]\n\n") {
		t.Fatalf("rest of the stream %q", rest)
	}
	sent, _ := up.last(t)
	if !bytes.Contains(sent, []byte(`"stream":true`)) {
		t.Fatalf("stream flag not forwarded: %s", truncate(sent))
	}
}

func TestGatewayNotGated(t *testing.T) {
	up := newUpstream(t, "Hello.")
	s := start(t, Options{Upstream: up.ts.URL})
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	r := post(t, s.url+"/v1/chat/completions?api-version=1", body)
	sent, _ := up.last(t)
	if r.status != 200 || r.header.Get(HeaderAction) != "skip" || !bytes.Equal(sent, body) || bytes.Contains(r.body, []byte("sufficiency")) {
		t.Fatalf("status %d action %q sent %s reply %s", r.status, r.header.Get(HeaderAction), sent, r.body)
	}
	// Gating switched off (sufficient_context.enabled: false) passes RAG
	// requests through ungated, without the documents an upstream rejects.
	off := start(t, Options{Upstream: up.ts.URL, GatewayOff: true})
	chat, _ := chatFor(t, request(t, "default", "inject"), false)
	r = post(t, off.url+"/v1/chat/completions", chat)
	sent, _ = up.last(t)
	var b sentBody
	decode(t, sent, &b)
	if r.header.Get(HeaderAction) != "skip" || b.Documents != nil || len(b.Messages) != 2 || b.Model != "test-model" {
		t.Fatalf("gating off: action %q, sent %s", r.header.Get(HeaderAction), truncate(sent))
	}
}

// TestGatewayFailOpen: a body the gate cannot decide is answered with the
// error (closed) or passed through unchanged (open), marked either way.
func TestGatewayFailOpen(t *testing.T) {
	bad := []byte(`{"model":"m","messages":[{"role":"user","content":"reset password"}],"documents":[{"id":"a","text":"t","scores":{"vector":7}}]}`)
	for _, open := range []bool{false, true} {
		up := newUpstream(t, "ok")
		s := start(t, Options{Upstream: up.ts.URL, FailOpen: open})
		r := post(t, s.url+"/v1/chat/completions", bad)
		if r.header.Get(HeaderAction) != "error" || r.header.Get(HeaderError) != "bad_field" {
			t.Fatalf("open=%v: headers %v", open, r.header)
		}
		if !open {
			wantGatewayError(t, r, 422, "bad_field", "documents[0].scores.vector")
			if up.calls.Load() != 0 {
				t.Fatal("fail closed called the upstream")
			}
			continue
		}
		// The body goes upstream as the client sent it, without the
		// documents (an OpenAI API rejects the unknown member).
		sent, hdr := up.last(t)
		if r.status != 200 || string(sent) != `{"model":"m","messages":[{"role":"user","content":"reset password"}]}` || hdr.Get(HeaderAction) != "error" {
			t.Fatalf("fail open: status %d, sent %s", r.status, sent)
		}
		if !strings.Contains(s.log.String(), "fail_open") {
			t.Fatal("fail open logged nothing")
		}
		// A body whose documents cannot be found (a laxer parser upstream
		// reads NaN, duplicates, deep nesting) is not forwarded at all.
		calls := up.calls.Load()
		for _, b := range []string{
			`{"messages":[{"role":"user","content":"q"}],"documents":[{"id":"a","text":"t"}],"temperature":NaN}`,
			`{"messages":[{"role":"user","content":"q"}],"documents":[],"documents":[{"id":"a","text":"t"}]}`,
		} {
			wantGatewayError(t, post(t, s.url+"/v1/chat/completions", []byte(b)), 400, "bad_json", "")
		}
		if up.calls.Load() != calls {
			t.Fatal("fail open forwarded a body whose documents it could not remove")
		}
	}
	// Malformed JSON, a bad extension and a body without a question.
	up := newUpstream(t, "ok")
	s := start(t, Options{Upstream: up.ts.URL})
	u := s.url + "/v1/chat/completions"
	wantGatewayError(t, post(t, u, []byte(`{"messages":[`)), 400, "bad_json", "")
	wantGatewayError(t, post(t, u, []byte(`{"ctxgate":[1]}`)), 422, "bad_field", "ctxgate")
	wantGatewayError(t, post(t, u, []byte(`{"documents":[],"messages":[{"role":"assistant","content":"x"}]}`)), 422, "bad_field", "messages")
	wantGatewayError(t, post(t, u, []byte(`{"documents":[{"id":"a","text":"t"}],"ctxgate":{"chunks":[]},"messages":[]}`)), 422, "bad_field", "documents")
	wantGatewayError(t, post(t, u, []byte(`{"messages":[{"role":"user","content":"q"}],"ctxgate":{"chunks":[],"now":"yesterday"}}`)), 422, "bad_field", "ctxgate.now")
}

func TestGatewayUpstreamErrors(t *testing.T) {
	up := newUpstream(t, "")
	up.handler = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(429)
		io.WriteString(w, `{"error":{"message":"rate limited"}}`)
	}
	s := start(t, Options{Upstream: up.ts.URL})
	chat, _ := chatFor(t, request(t, "default", "inject"), false)
	r := post(t, s.url+"/v1/chat/completions", chat)
	if r.status != 429 || string(r.body) != `{"error":{"message":"rate limited"}}` || r.header.Get(HeaderAction) != "inject" {
		t.Fatalf("upstream error not relayed: %d %s", r.status, r.body)
	}
	// An upstream that cannot be reached is 502.
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	s2 := start(t, Options{Upstream: url})
	wantGatewayError(t, post(t, s2.url+"/v1/chat/completions", chat), 502, codeUpstream, "")
}
