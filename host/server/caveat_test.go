package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// chatEvents is an upstream's chat stream: a role chunk, two text deltas
// and a finishing chunk, OpenAI's way. finalText puts text in the finishing
// chunk too (some servers do).
func chatEvents(finalText string) string {
	chunk := func(choice string) string {
		return `data: {"id":"chatcmpl-up","object":"chat.completion.chunk","created":1700000000,"model":"test-model","choices":[` + choice + "]}\n\n"
	}
	fin := `{"index":0,"delta":{},"finish_reason":"stop"}`
	if finalText != "" {
		fin = `{"index":0,"delta":{"content":` + string(mustJSONString(finalText)) + `},"finish_reason":"stop"}`
	}
	return chunk(`{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}`) +
		chunk(`{"index":0,"delta":{"content":"Open"},"finish_reason":null}`) +
		chunk(`{"index":0,"delta":{"content":" Settings [S1]."},"finish_reason":null}`) +
		chunk(fin) + "data: [DONE]\n\n"
}

func mustJSONString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// streamingUpstream answers a chat request with answer, or with events when
// it asks for a stream.
func streamingUpstream(t testing.TB, answer, events string) *upstream {
	up := newUpstream(t, answer)
	up.handler = func(w http.ResponseWriter, r *http.Request) {
		body, _ := up.last(t)
		if bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, events)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, completion(answer))
	}
	return up
}

type streamChunk struct {
	ID      string
	Object  string
	Created int64
	Model   string
	Choices []struct {
		Index  int
		Delta  struct{ Content *string }
		Finish *string `json:"finish_reason"`
	}
	Suff *struct {
		Score float64
		Level string
	} `json:"sufficiency"`
}

// readChatStream parses a chat stream: its chunks, the assembled text of
// choice 0, and whether it ended with [DONE].
func readChatStream(t testing.TB, b []byte) (chunks []streamChunk, text string, done bool) {
	t.Helper()
	for _, ev := range strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n") {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok {
			t.Fatalf("not a data event: %q", ev)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var c streamChunk
		decode(t, []byte(data), &c)
		chunks = append(chunks, c)
		for _, ch := range c.Choices {
			if ch.Index == 0 && ch.Delta.Content != nil {
				text += *ch.Delta.Content
			}
		}
	}
	return chunks, text, done
}

// TestCaveatDelivery: a caveat decision's caveat reaches the user in the
// answer's text, streamed or not, as each delivery mode says; the answer
// check reads the model's own text; the final chunk of a stream carries
// the sufficiency object in every mode.
func TestCaveatDelivery(t *testing.T) {
	const answer = "Open Settings [S1]."
	for _, c := range []struct {
		mode       CaveatDelivery
		finalText  string // text in the upstream's finishing chunk
		wantPrefix bool
		wantSuffix bool
	}{
		{CaveatPrefix, "", true, false},
		{CaveatSuffix, "", false, true},
		{CaveatSuffix, " More.", false, true},
		{CaveatInstruction, "", false, false},
		{CaveatNone, "", false, false},
	} {
		t.Run(string(c.mode)+"/"+c.finalText, func(t *testing.T) {
			up := streamingUpstream(t, answer, chatEvents(c.finalText))
			s := start(t, Options{Upstream: up.ts.URL, CaveatDelivery: c.mode})
			d := mustDecision(t, post(t, s.url+"/v1/gate", request(t, "default", "caveat")).body)
			if d.Action != "caveat" || d.Caveat == "" {
				t.Fatalf("golden caveat request decides %s %q", d.Action, d.Caveat)
			}
			want := func(text string) string {
				switch {
				case c.wantPrefix:
					return d.Caveat + "\n\n" + text
				case c.wantSuffix:
					return text + "\n\n" + d.Caveat
				}
				return text
			}

			body, _ := chatFor(t, request(t, "default", "caveat"), false)
			r := post(t, s.url+"/v1/chat/completions", body)
			var reply struct {
				Choices []struct{ Message chatMsg }
				Suff    *struct{ Level string } `json:"sufficiency"`
			}
			decode(t, r.body, &reply)
			if r.status != 200 || reply.Choices[0].Message.Content != want(answer) || reply.Suff == nil || reply.Suff.Level != "partial" {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if r.header.Get(HeaderAnswerCheck) != "ok" || r.header.Get(HeaderUncited) != "0" || r.header.Get(HeaderAction) != "caveat" {
				t.Errorf("the answer check read the caveat: %v", r.header)
			}
			// The system message: the caveat in every mode, the instruction
			// only in instruction mode.
			sent, _ := up.last(t)
			var sb sentBody
			decode(t, sent, &sb)
			sys := sb.Messages[1].Content
			if sb.Messages[1].Role != "system" || !strings.Contains(sys, d.Caveat) || strings.Contains(sys, caveatInstruction) != (c.mode == CaveatInstruction) {
				t.Errorf("system message %q", sys)
			}

			body, _ = chatFor(t, request(t, "default", "caveat"), true)
			r = post(t, s.url+"/v1/chat/completions", body)
			chunks, text, done := readChatStream(t, r.body)
			if r.status != 200 || !done || text != want(answer+c.finalText) {
				t.Fatalf("stream text %q, done %v:\n%s", text, done, r.body)
			}
			last := chunks[len(chunks)-1]
			if last.Suff == nil || last.Suff.Level != "partial" || len(last.Choices) != 0 || last.ID != "chatcmpl-up" ||
				last.Created != 1700000000 || last.Model != "test-model" || last.Object != "chat.completion.chunk" {
				t.Fatalf("final chunk %+v", last)
			}
			for _, ch := range chunks[:len(chunks)-1] {
				if ch.Suff != nil || ch.ID != "chatcmpl-up" {
					t.Fatalf("chunk %+v", ch)
				}
			}
			if r.header.Get(HeaderAction) != "caveat" || r.header.Get(HeaderDecisionID) == "" {
				t.Errorf("stream headers %v", r.header)
			}
		})
	}
}

// TestCaveatNotOnInject: an inject answer's text is the model's; its stream
// still ends with the sufficiency chunk.
func TestCaveatNotOnInject(t *testing.T) {
	up := streamingUpstream(t, "Open Settings [S1].", chatEvents(""))
	s := start(t, Options{Upstream: up.ts.URL})
	body, _ := chatFor(t, request(t, "default", "inject"), true)
	r := post(t, s.url+"/v1/chat/completions", body)
	chunks, text, _ := readChatStream(t, r.body)
	if text != "Open Settings [S1]." || chunks[len(chunks)-1].Suff == nil || chunks[len(chunks)-1].Suff.Level != "sufficient" {
		t.Fatalf("%q\n%s", text, r.body)
	}
	if !bytes.HasPrefix(r.body, []byte(strings.TrimSuffix(chatEvents(""), "data: [DONE]\n\n"))) {
		t.Fatalf("the upstream's events were altered:\n%s", r.body)
	}
}

// TestCaveatToolCalls: a choice without text (tool calls only) gets no
// caveat text in either mode.
func TestCaveatToolCalls(t *testing.T) {
	events := `data: {"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n"
	for _, mode := range []CaveatDelivery{CaveatPrefix, CaveatSuffix} {
		up := streamingUpstream(t, "", events)
		s := start(t, Options{Upstream: up.ts.URL, CaveatDelivery: mode})
		body, _ := chatFor(t, request(t, "default", "caveat"), true)
		r := post(t, s.url+"/v1/chat/completions", body)
		if _, text, _ := readChatStream(t, r.body); text != "" || !bytes.HasPrefix(r.body, []byte(strings.TrimSuffix(events, "data: [DONE]\n\n"))) {
			t.Fatalf("%s: text %q\n%s", mode, text, r.body)
		}
	}
}

// TestRefusalIDs: every local refusal has an id of its own and the time it
// was answered.
func TestRefusalIDs(t *testing.T) {
	up := newUpstream(t, "")
	s := start(t, Options{Upstream: up.ts.URL})
	body, _ := chatFor(t, request(t, "default", "refuse_off_topic"), false)
	ids := map[string]bool{}
	for range 3 {
		var c struct {
			ID      string
			Created int64
		}
		decode(t, post(t, s.url+"/v1/chat/completions", body).body, &c)
		if !strings.HasPrefix(c.ID, "chatcmpl-ctxgate-") || len(c.ID) != len("chatcmpl-ctxgate-")+32 || ids[c.ID] {
			t.Fatalf("id %q (seen: %v)", c.ID, ids)
		}
		if now := time.Now().Unix(); c.Created < now-60 || c.Created > now+1 {
			t.Fatalf("created %d, now %d", c.Created, now)
		}
		ids[c.ID] = true
	}
}

func TestParseCaveatDelivery(t *testing.T) {
	for in, want := range map[string]CaveatDelivery{"": CaveatPrefix, "prefix": CaveatPrefix, "suffix": CaveatSuffix, "instruction": CaveatInstruction, "none": CaveatNone} {
		if got, err := ParseCaveatDelivery(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	if _, err := ParseCaveatDelivery("append"); err == nil || !strings.Contains(err.Error(), "caveat_delivery") {
		t.Errorf("append: %v", err)
	}
}

func TestEvents(t *testing.T) {
	for _, c := range []struct {
		in   string
		next int
	}{
		{"data: x\n\nrest", 9},
		{"event: e\r\ndata: x\r\n\r\n", 21},
		{"data: x\r\rdata: y", 9},
		{"data: x\n", 0},
		{"data: x\r", 0},
		{"\n", 1},
	} {
		if got := nextEvent([]byte(c.in)); got != c.next {
			t.Errorf("nextEvent(%q) = %d, want %d", c.in, got, c.next)
		}
	}
	// The data as the SDKs read it (data lines joined by "\n"), and the
	// event with its data replaced by X.
	for _, c := range []struct {
		ev, data string
		ok       bool
		withX    string
	}{
		{"data: {\"a\":1}\n\n", `{"a":1}`, true, "data: X\n\n"},
		{"event: response.completed\r\ndata:{}\r\n\r\n", `{}`, true, "event: response.completed\r\ndata: X\r\n\r\n"},
		{": comment\nid: 3\ndata: [DONE]\n\n", `[DONE]`, true, ": comment\nid: 3\ndata: X\n\n"},
		{"data: {\"a\":\ndata:  1}\n\n", "{\"a\":\n 1}", true, "data: X\n\n"},
		{"data\nid: 1\rdata: b\r\n\r\n", "\nb", true, "data: X\nid: 1\r\r\n"},
		{"event: ping\n\n", "", false, ""},
		{"Data: x\n datA: y\n\n", "", false, ""},
	} {
		data, ok := eventData([]byte(c.ev))
		if ok != c.ok || string(data) != c.data {
			t.Errorf("eventData(%q) = %q %v", c.ev, data, ok)
			continue
		}
		if ok {
			if got := string(withEventData(nil, []byte(c.ev), []byte("X"))); got != c.withX {
				t.Errorf("withEventData(%q) = %q, want %q", c.ev, got, c.withX)
			}
		}
	}
}

// FuzzStreamEditors: no upstream stream makes the editors panic; an event
// comes out whole (ending where it ended), one without data is relayed as
// it came, and what comes out never holds a sufficiency object of the
// upstream's (checked on the events as a client reads them).
func FuzzStreamEditors(f *testing.F) {
	f.Add([]byte(chatEvents("")))
	f.Add([]byte(chatEvents(" More.")))
	f.Add([]byte(responseEvents("Open", " Settings [S1].")))
	f.Add([]byte("data: {\"choices\":[{\"index\":-1,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\r\n\r\n: c\n\n"))
	d := &decisionView{Action: "caveat", Level: "partial", Confidence: "0.6", ConfidenceFactors: []string{}}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, mode := range []CaveatDelivery{CaveatPrefix, CaveatSuffix} {
			for _, ed := range []streamEditor{newChatStream(d, mode, "Careful."), &responsesStream{d: d, mode: mode, caveat: "Careful."}, stripStream{}} {
				rest := b
				for {
					k := nextEvent(rest)
					if k == 0 {
						break
					}
					ev := rest[:k]
					out, err := ed.event(nil, ev)
					if err != nil {
						break // the stream ends here
					}
					if _, ok := eventData(ev); !ok && !bytes.Equal(out, ev) {
						t.Fatalf("an event without data was changed: %q -> %q", ev, out)
					}
					if nextEvent(out) == 0 && len(out) > 0 {
						t.Fatalf("the editor left an event open: %q -> %q", ev, out)
					}
					_, strip := ed.(stripStream)
					for o := out; nextEvent(o) > 0; o = o[nextEvent(o):] {
						if bad := foreignSufficiency(o[:nextEvent(o)], d, strip); bad != "" {
							t.Fatalf("an upstream's sufficiency came through: %q -> %q", ev, bad)
						}
					}
					rest = rest[k:]
				}
				ed.end(nil)
			}
		}
	})
}

// foreignSufficiency returns the data of ev when a client reading it finds
// a sufficiency object other than the gate's for d (none at all when
// strip).
func foreignSufficiency(ev []byte, d *decisionView, strip bool) string {
	data, ok := eventData(ev)
	if !ok {
		return ""
	}
	root, _, err := parseAsClients(data)
	if err != nil {
		return ""
	}
	want := string(appendSufficiency(nil, d))
	for _, v := range []*jsonx.Value{&root, root.Get("response")} {
		for i := 0; i < v.Len() && v.Kind() == jsonx.Object; i++ {
			if isSufficiency(v.Key(i)) && (strip || string(jsonx.AppendValue(nil, v.Member(i))) != want) {
				return string(data)
			}
		}
	}
	return ""
}

// TestCaveatUnterminatedLastEvent: a stream whose last event the upstream
// never ends with a blank line (some SSE readers dispatch it all the same)
// has that event edited like any other: the caveat is in its text, and the
// gateway ends it.
func TestCaveatUnterminatedLastEvent(t *testing.T) {
	for _, end := range []string{"", "\n", "\r\n", "\r"} {
		ev := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Open Settings [S1]."},"finish_reason":"stop"}]}` + end
		up := streamingUpstream(t, "", ev)
		s := start(t, Options{Upstream: up.ts.URL})
		d := mustDecision(t, post(t, s.url+"/v1/gate", request(t, "default", "caveat")).body)
		body, _ := chatFor(t, request(t, "default", "caveat"), true)
		r := post(t, s.url+"/v1/chat/completions", body)
		first, _, ok := strings.Cut(string(r.body), "\n\n")
		if !ok || !strings.Contains(first, `"content":`+string(mustJSON(t, d.Caveat+"\n\nOpen Settings [S1]."))) {
			t.Fatalf("end %q: the unended event went without the caveat: %q", end, r.body)
		}
	}
}
