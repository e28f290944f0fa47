package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/internal/hostile"
)

// recordingUpstream stands in for the model server: it records every
// request that reaches it and answers with a chat completion, or with
// answer when set.
type recordingUpstream struct {
	ts     *httptest.Server
	mu     sync.Mutex
	seen   []string // method, path and body of each request
	answer func(w http.ResponseWriter, r *http.Request)
}

func newRecordingUpstream(t *testing.T) *recordingUpstream {
	u := &recordingUpstream{}
	u.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.seen = append(u.seen, r.Method+" "+r.URL.RequestURI()+" "+string(b))
		answer := u.answer
		u.mu.Unlock()
		if answer != nil {
			answer(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Open Settings [S1]."},"finish_reason":"stop"}]}`)
	}))
	t.Cleanup(u.ts.Close)
	return u
}

// take returns what reached the upstream since the last take.
func (u *recordingUpstream) take() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := u.seen
	u.seen = nil
	return s
}

// rawExchange sends one request exactly as given (method, request target,
// body) on a connection of its own and reads the answer.
func rawExchange(t *testing.T, base, method, target string, body []byte) (*http.Response, []byte) {
	t.Helper()
	u, _ := url.Parse(base)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if rest, ok := strings.CutPrefix(target, "ABSOLUTE"); ok {
		target = base + rest
	}
	head := method + " " + target + " HTTP/1.1\r\nHost: " + u.Host + "\r\nContent-Type: application/json\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n"
	if _, err := conn.Write(append([]byte(head), body...)); err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b
}

// ragBodies are a chat body and a Responses API body carrying
// testdata/requests/default/<name>'s question, and its chunks as documents,
// and that gate request itself.
func ragBodies(t *testing.T, name string, stream bool) (chat, responses, gateRequest []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", "default", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		Query  string          `json:"query"`
		Chunks json.RawMessage `json:"chunks"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatal(err)
	}
	q, _ := json.Marshal(req.Query)
	common := `"model":"m","stream":` + strconv.FormatBool(stream) + `,"documents":` + string(req.Chunks)
	chat = []byte(`{` + common + `,"messages":[{"role":"user","content":` + string(q) + `}]}`)
	responses = []byte(`{` + common + `,"input":` + string(q) + `}`)
	return chat, responses, raw
}

// refusedText is in the documents of refuse_off_topic, which the default
// policy refuses.
const refusedText = "Invoices are issued"

// TestServeGatedRoutes is issue 24's first item against `ctxgate serve`:
// every spelling of a gated endpoint (internal/hostile.GatedRoutes) that an
// upstream may answer as chat completions or the Responses API is gated,
// with the upstream base URL in the SDKs' form (/v1) and without it. A body
// whose documents the policy refuses never reaches the upstream: POST is
// refused by the gate (X-Ctxgate-Action: refuse), a method that cannot carry
// a chat request is answered 405 in OpenAI's error shape. An inject body
// spelled without /v1 reaches the upstream rewritten, its documents gone.
func TestServeGatedRoutes(t *testing.T) {
	up := newRecordingUpstream(t)
	chat, responses, _ := ragBodies(t, "refuse_off_topic", false)
	for _, base := range []string{up.ts.URL + "/v1", up.ts.URL} {
		t.Run("base "+base[len(up.ts.URL):]+"/", func(t *testing.T) {
			srv := startChild(t, nil, append([]string{"--reload-poll", "0", "--access-log", "off", "--upstream", base}, wasmFlags(t, "tinygo")...)...)
			for _, rt := range hostile.GatedRoutes() {
				body := chat
				if rt.API == "responses" {
					body = responses
				}
				resp, b := rawExchange(t, srv.base, rt.Method, rt.Target, body)
				for _, s := range up.take() {
					if strings.Contains(s, refusedText) {
						t.Errorf("%s (%s %s): the documents reached the upstream: %.120s", rt.Name, rt.Method, rt.Target, s)
					}
				}
				switch {
				case rt.Refused:
					if resp.StatusCode != http.StatusMethodNotAllowed || !openAIError(b) {
						t.Errorf("%s (%s %s): %d %s, want 405 in OpenAI's error shape", rt.Name, rt.Method, rt.Target, resp.StatusCode, b)
					}
				case resp.Header.Get("X-Ctxgate-Action") != "refuse":
					t.Errorf("%s (%s %s): %d, action %q, want the gate's refusal: %.200s", rt.Name, rt.Method, rt.Target,
						resp.StatusCode, resp.Header.Get("X-Ctxgate-Action"), b)
				}
			}

			// Gated, not only refused: an inject body spelled without /v1
			// reaches the upstream's endpoint rewritten.
			body, _, _ := ragBodies(t, "inject", false)
			resp, b := rawExchange(t, srv.base, "POST", "/Chat/Completions;v=1/", body)
			seen := up.take()
			if resp.StatusCode != 200 || resp.Header.Get("X-Ctxgate-Action") != "inject" || len(seen) != 1 ||
				strings.Contains(seen[0], `"documents"`) || !strings.Contains(seen[0], "[S1] (doc: kb/security)") {
				t.Fatalf("inject without /v1: %d action %q, upstream saw %q: %s", resp.StatusCode, resp.Header.Get("X-Ctxgate-Action"), seen, b)
			}
		})
	}
}

// openAIError reports whether b is OpenAI's error object.
func openAIError(b []byte) bool {
	var e struct {
		Error *struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    string  `json:"code"`
		} `json:"error"`
	}
	return json.Unmarshal(b, &e) == nil && e.Error != nil && e.Error.Message != "" && e.Error.Type != "" && e.Error.Code != ""
}

// clientEvents reads a server-sent event stream as the OpenAI SDKs do: an
// event's data is its data lines joined by "\n"; [DONE] ends it.
func clientEvents(b []byte) []string {
	var events []string
	var data []string
	has := false
	lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(string(b), "\r\n", "\n"), "\r", "\n"), "\n")
	for _, line := range lines {
		if line == "" {
			if has {
				events = append(events, strings.Join(data, "\n"))
			}
			data, has = nil, false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		if field == "data" {
			data, has = append(data, value), true
		}
	}
	return events
}

// TestServeUpstreamDuplicateMembers is issue 24's third item against
// `ctxgate serve`: an upstream answer whose members repeat
// (internal/hostile.DuplicateMemberAnswers, FirstTextEvents) is read as a
// client reads it (the last member wins), so the caveat reaches the text a
// client reads, and the upstream's own sufficiency object never reaches the
// client, in a JSON answer or in a stream's first text event. An answer a
// client could read but the gateway cannot edit (NaN, nesting past 64
// levels) is not relayed.
func TestServeUpstreamDuplicateMembers(t *testing.T) {
	up := newRecordingUpstream(t)
	srv := startChild(t, nil, append([]string{"--reload-poll", "0", "--access-log", "off", "--upstream", up.ts.URL}, wasmFlags(t, "tinygo")...)...)
	answer := func(ctype, body string) {
		up.mu.Lock()
		up.answer = func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ctype)
			io.WriteString(w, body)
		}
		up.mu.Unlock()
	}
	for _, stream := range []bool{false, true} {
		body, _, gateReq := ragBodies(t, "caveat", stream)
		resp, err := http.Post(srv.base+"/v1/gate", "application/json", strings.NewReader(string(gateReq)))
		if err != nil {
			t.Fatal(err)
		}
		var d struct{ Action, Caveat string }
		json.NewDecoder(resp.Body).Decode(&d)
		resp.Body.Close()
		if d.Action != "caveat" || d.Caveat == "" {
			t.Fatalf("the caveat request decides %q", d.Action)
		}
		cases := hostile.DuplicateMemberAnswers()
		if stream {
			cases = hostile.FirstTextEvents()
		}
		for _, c := range cases {
			if stream {
				answer("text/event-stream", c.Body+`data: {"id":"chatcmpl-dup","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" [S1]."},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
			} else {
				answer("application/json", c.Body)
			}
			resp, b := rawExchange(t, srv.base, "POST", "/v1/chat/completions", body)
			up.take()
			if bytes.Contains(b, []byte(hostile.Forged)) {
				t.Errorf("stream %v, %s: the upstream's own sufficiency reached the client: %s", stream, c.Name, b)
			}
			var text string
			ok := resp.StatusCode == 200
			switch {
			case !ok:
			case stream:
				events := clientEvents(b)
				if len(events) == 0 || strings.HasPrefix(events[0], "[DONE]") {
					ok = false
					break
				}
				var chunk struct {
					Choices []struct {
						Delta struct{ Content string } `json:"delta"`
					} `json:"choices"`
					Error json.RawMessage `json:"error"`
				}
				ok = json.Unmarshal([]byte(events[0]), &chunk) == nil && chunk.Error == nil && len(chunk.Choices) > 0
				if ok {
					text = chunk.Choices[0].Delta.Content
				}
			default:
				var completion struct {
					Choices []struct {
						Message struct{ Content string } `json:"message"`
					} `json:"choices"`
					Sufficiency json.RawMessage `json:"sufficiency"`
				}
				ok = json.Unmarshal(b, &completion) == nil && len(completion.Choices) > 0
				if ok {
					text = completion.Choices[0].Message.Content
					if completion.Sufficiency == nil {
						t.Errorf("%s: no sufficiency: %s", c.Name, b)
					}
				}
			}
			if c.Unreadable {
				// Not relayed: an error (a stream's first event is one),
				// never the upstream's text.
				events := clientEvents(b)
				relayed := resp.StatusCode == 200 && (!stream || len(events) == 0 || !strings.HasPrefix(events[0], `{"error":`))
				if relayed || strings.Contains(string(b), c.Text) {
					t.Errorf("stream %v, %s: an answer the gateway cannot edit was relayed: %d %s", stream, c.Name, resp.StatusCode, b)
				}
				continue
			}
			if want := d.Caveat + "\n\n" + c.Text; !ok || text != want {
				t.Errorf("stream %v, %s: a client reads %q, want %q: %d %s", stream, c.Name, text, want, resp.StatusCode, b)
			}
		}
	}
}

// TestServeStreamEventDeadline is issue 24's seventh item against `ctxgate
// serve`: an upstream that sends one event, then drips the next one a byte
// at a time and never finishes it, is cut at upstream_idle_timeout (here
// the write timeout's default), on a gated stream and on a pass-through
// one: the stream ends with an error event and data: [DONE], as for a
// stall. Every byte used to restart the idle timer, so the drip held the
// stream for as long as the upstream liked; the client's 20 s timeout
// stands for "forever" here.
func TestServeStreamEventDeadline(t *testing.T) {
	up := newRecordingUpstream(t)
	up.answer = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Open"},"finish_reason":null}]}`+"\n\n")
		w.(http.Flusher).Flush()
		drip := `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" Settings"}}]}`
		for i := 0; ; i++ {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			io.WriteString(w, drip[i%len(drip):i%len(drip)+1])
			w.(http.Flusher).Flush()
		}
	}
	srv := startChild(t, nil, append([]string{"--reload-poll", "0", "--access-log", "off", "--upstream", up.ts.URL,
		"--write-timeout", "1s"}, wasmFlags(t, "tinygo")...)...)
	gated, _, _ := ragBodies(t, "inject", true)
	for _, c := range []struct{ name, path, body string }{
		{"gated", "/v1/chat/completions", string(gated)},
		{"pass-through", "/v1/completions", `{"model":"m","prompt":"p","stream":true}`},
	} {
		client := &http.Client{Timeout: 20 * time.Second}
		resp, err := client.Post(srv.base+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		events := clientEvents(b)
		if err != nil || len(events) != 3 || !strings.Contains(events[0], `"Open"`) ||
			!strings.Contains(events[1], `"code":"upstream_timeout"`) || events[2] != "[DONE]" {
			t.Fatalf("%s: the dripping event was not cut at upstream_idle_timeout (err %v): %q", c.name, err, b)
		}
	}
}

// procMemory reads a process's resident set size and its peak (VmRSS,
// VmHWM) in bytes.
func procMemory(t *testing.T, pid int) (rss, peak int64) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	return rss, peak
}

// bigChat is a chat body of about size bytes, most of it a long system
// message, with one document and a short question: the gate decides it.
func bigChat(size int) []byte {
	head := `{"model":"m","messages":[{"role":"system","content":"`
	tail := `"},{"role":"user","content":"How do I reset my password?"}],"documents":[{"id":"a","text":"Open Settings, choose Security, and click Reset password.","scores":{"vector":0.9,"bm25":12}}]}`
	return []byte(head + strings.Repeat("x", size-len(head)-len(tail)) + tail)
}

// TestServeBodyMemory is issue 24's fourth item against a `ctxgate serve`
// process: many connections holding large bodies at once leave its memory
// bounded, and it returns once they are gone. 40 connections send an 8 MiB
// chat body to the gateway (max_body_bytes) and 20 an 8 MiB body to
// /v1/gate, all but the last byte, and hold; the test then reads serve's
// peak resident memory, finishes the requests, and waits for the resident
// memory to come back. /v1/gate now reads at most the policy's
// max_request_bytes (1 MiB: a longer declared body is refused unread), and
// the bodies held at once are bounded by max_inflight_body_bytes (64 MiB),
// past which a request is answered 503. On main every body was held whole,
// 480 MiB, and the memory stayed.
func TestServeBodyMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 480 MiB to a ctxgate serve process")
	}
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Open Settings [S1]."},"finish_reason":"stop"}]}`)
	}))
	defer upstream.Close()
	srv := startChild(t, nil, append([]string{"--reload-poll", "0", "--access-log", "off", "--upstream", upstream.URL}, wasmFlags(t, "tinygo")...)...)

	const size = 8 << 20
	chat := bigChat(size)
	gateReq := append([]byte(`{"query":"q","chunks":[{"id":"a","text":"`+strings.Repeat("y", size-64)), `"}]}`...)
	// Warm up: the Wasm instances grow to their working size on the
	// largest requests, once; that memory is theirs to keep.
	for range 3 {
		rawExchange(t, srv.base, "POST", "/v1/chat/completions", chat)
		rawExchange(t, srv.base, "POST", "/v1/gate", gateReq[:1<<20])
	}
	base, _ := procMemory(t, srv.cmd.Process.Pid)

	type conn struct {
		c    net.Conn
		last []byte
	}
	var conns []conn
	var mu sync.Mutex
	var wg sync.WaitGroup
	hold := func(path string, body []byte) {
		defer wg.Done()
		u, _ := url.Parse(srv.base)
		c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
		if err != nil {
			t.Error(err)
			return
		}
		c.SetDeadline(time.Now().Add(60 * time.Second))
		head := "POST " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nContent-Type: application/json\r\nContent-Length: " +
			strconv.Itoa(len(body)) + "\r\n\r\n"
		// A write the server cut short (it answered and closed) is fine.
		if _, err := c.Write([]byte(head)); err == nil {
			c.Write(body[:len(body)-1])
		}
		mu.Lock()
		conns = append(conns, conn{c, body[len(body)-1:]})
		mu.Unlock()
	}
	for i := range 60 {
		wg.Add(1)
		if i%3 == 2 {
			go hold("/v1/gate", gateReq)
		} else {
			go hold("/v1/chat/completions", chat)
		}
	}
	wg.Wait()
	time.Sleep(200 * time.Millisecond) // what the server took in, it holds now
	_, peak := procMemory(t, srv.cmd.Process.Pid)
	status := map[int]int{}
	for _, c := range conns {
		c.c.Write(c.last)
		if resp, err := http.ReadResponse(bufio.NewReader(c.c), nil); err == nil {
			status[resp.StatusCode]++
			io.Copy(io.Discard, resp.Body)
		} else {
			status[0]++
		}
		c.c.Close()
	}
	t.Logf("60 bodies of 8 MiB: statuses %v; serve's resident memory %d MiB before, peak %d MiB", status, base>>20, peak>>20)
	if grew := peak - base; grew > 200<<20 {
		t.Errorf("serve's memory grew by %d MiB holding the bodies, over 200 MiB", grew>>20)
	}
	if status[200] == 0 {
		t.Errorf("no request got through: %v", status)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		rss, _ := procMemory(t, srv.cmd.Process.Pid)
		if rss < base+64<<20 {
			t.Logf("back to %d MiB", rss>>20)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve's memory stayed at %d MiB after the load (%d MiB before it)", rss>>20, base>>20)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
