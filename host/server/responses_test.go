package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// responseJSON is an upstream's Responses API answer with text.
func responseJSON(text string) string {
	return `{"id":"resp_up","object":"response","created_at":1700000000,"status":"completed","model":"test-model","output":[` +
		`{"type":"reasoning","id":"rs_1","summary":[]},` +
		`{"type":"message","id":"msg_up","status":"completed","role":"assistant","content":[{"type":"output_text","text":` +
		string(mustJSONString(text)) + `,"annotations":[]}]}],"usage":{"input_tokens":5,"output_tokens":3,"total_tokens":8}}`
}

// responseEvents is the same answer as the Responses API streams it, text
// in two deltas.
func responseEvents(a, b string) string {
	seq := 0
	ev := func(typ, body string) string {
		s := "event: " + typ + "\ndata: {\"type\":\"" + typ + "\",\"sequence_number\":" + strconv.Itoa(seq) + body + "}\n\n"
		seq++
		return s
	}
	part := `,"item_id":"msg_up","output_index":1,"content_index":0`
	full := string(mustJSONString(a + b))
	item := func(status, content string) string {
		return `{"type":"message","id":"msg_up","status":"` + status + `","role":"assistant","content":[` + content + `]}`
	}
	textPart := `{"type":"output_text","text":` + full + `,"annotations":[]}`
	resp := func(status, output string) string {
		return `{"id":"resp_up","object":"response","created_at":1700000000,"status":"` + status + `","model":"test-model","output":[` + output + `]}`
	}
	return ev("response.created", `,"response":`+resp("in_progress", "")) +
		ev("response.output_item.added", `,"output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}`) +
		ev("response.output_item.done", `,"output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}`) +
		ev("response.output_item.added", `,"output_index":1,"item":`+item("in_progress", "")) +
		ev("response.content_part.added", part+`,"part":{"type":"output_text","text":"","annotations":[]}`) +
		ev("response.output_text.delta", part+`,"delta":`+string(mustJSONString(a))+`,"logprobs":[]`) +
		ev("response.output_text.delta", part+`,"delta":`+string(mustJSONString(b))+`,"logprobs":[]`) +
		ev("response.output_text.done", part+`,"text":`+full+`,"logprobs":[]`) +
		ev("response.content_part.done", part+`,"part":`+textPart) +
		ev("response.output_item.done", `,"output_index":1,"item":`+item("completed", textPart)) +
		ev("response.completed", `,"response":`+resp("completed", `{"type":"reasoning","id":"rs_1","summary":[]},`+item("completed", textPart)))
}

// responsesFor is a Responses API body for a golden gate request: the
// question as "input" (a string, or a list of items), chunks as documents.
func responsesFor(t testing.TB, gateReq []byte, stream, items bool) []byte {
	t.Helper()
	var m struct {
		Query  string          `json:"query"`
		Chunks json.RawMessage `json:"chunks"`
	}
	decode(t, gateReq, &m)
	body := map[string]any{"model": "test-model", "documents": m.Chunks, "instructions": "You are the support bot.", "input": m.Query}
	if items {
		body["input"] = []map[string]any{{"role": "user", "content": []map[string]string{{"type": "input_text", "text": m.Query}}}}
	}
	if stream {
		body["stream"] = true
	}
	return mustJSON(t, body)
}

type responseObj struct {
	ID        string
	Object    string
	CreatedAt int64 `json:"created_at"`
	Status    string
	Model     string
	Output    []struct {
		Type, ID, Role string
		Content        []struct{ Type, Text string }
	}
	Suff *struct{ Level string } `json:"sufficiency"`
}

// text is the response's output_text, as the SDKs' output_text joins it.
func (r *responseObj) text() string {
	s := ""
	for _, o := range r.Output {
		for _, c := range o.Content {
			if c.Type == "output_text" {
				s += c.Text
			}
		}
	}
	return s
}

// TestResponsesGateway: POST /v1/responses with documents is gated like a
// chat request: the input rewritten for the upstream, the refusal answered
// locally, the answer checked, the caveat in its text, the sufficiency
// object on the response (streamed: on response.completed's response).
func TestResponsesGateway(t *testing.T) {
	up := newUpstream(t, "")
	up.handler = func(w http.ResponseWriter, r *http.Request) {
		body, _ := up.last(t)
		if bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, responseEvents("Open", " Settings [S1]."))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, responseJSON("Open Settings [S1]."))
	}
	s := start(t, Options{Upstream: up.ts.URL})
	inject := request(t, "default", "inject")
	d := mustDecision(t, post(t, s.url+"/v1/gate", inject).body)

	for _, items := range []bool{false, true} {
		r := post(t, s.url+"/v1/responses", responsesFor(t, inject, false, items))
		var resp responseObj
		decode(t, r.body, &resp)
		if r.status != 200 || r.header.Get(HeaderAction) != "inject" || r.header.Get(HeaderAnswerCheck) != "ok" ||
			resp.text() != "Open Settings [S1]." || resp.Suff == nil || resp.Suff.Level != "sufficient" {
			t.Fatalf("items=%v: %d %v %s", items, r.status, r.header, r.body)
		}
		sent, _ := up.last(t)
		var sb struct {
			Input        []chatMsg       `json:"-"`
			RawInput     json.RawMessage `json:"input"`
			Documents    json.RawMessage `json:"documents"`
			Instructions string          `json:"instructions"`
		}
		decode(t, sent, &sb)
		var input []map[string]any
		decode(t, sb.RawInput, &input)
		if sb.Documents != nil || sb.Instructions != "You are the support bot." || len(input) != 2 || input[0]["role"] != "system" ||
			input[0]["content"] != d.Prompt.Instructions+"\n\n"+d.Prompt.Sources || input[1]["role"] != "user" {
			t.Fatalf("items=%v: sent %s", items, truncate(sent))
		}
	}

	// The caveat, as a prefix (the default), in the JSON answer and in the
	// stream's first delta and every full text after it.
	caveat := mustDecision(t, post(t, s.url+"/v1/gate", request(t, "default", "caveat")).body)
	r := post(t, s.url+"/v1/responses", responsesFor(t, request(t, "default", "caveat"), false, false))
	var resp responseObj
	decode(t, r.body, &resp)
	want := caveat.Caveat + "\n\nOpen Settings [S1]."
	if resp.text() != want || resp.Suff == nil || resp.Suff.Level != "partial" || r.header.Get(HeaderUncited) != "0" {
		t.Fatalf("caveat answer %s", r.body)
	}
	r = post(t, s.url+"/v1/responses", responsesFor(t, request(t, "default", "caveat"), true, false))
	checkResponseStream(t, r.body, want, "partial")

	// Not gated without documents: forwarded byte for byte.
	plain := []byte(`{"model":"m","input":"hi"}`)
	r = post(t, s.url+"/v1/responses", plain)
	if sent, _ := up.last(t); r.status != 200 || r.header.Get(HeaderAction) != "skip" || !bytes.Equal(sent, plain) {
		t.Fatalf("ungated: %d %s, sent %s", r.status, r.header.Get(HeaderAction), sent)
	}
	// Errors name the body's fields, in OpenAI's shape.
	wantGatewayError(t, post(t, s.url+"/v1/responses", []byte(`{"input":{"x":1},"documents":[]}`)), 422, "bad_field", "input")
	wantGatewayError(t, post(t, s.url+"/v1/responses", []byte(`{"input":"q","documents":[{"id":"a","text":"t","scores":{"vector":9}}]}`)), 422, "bad_field", "documents[0].scores.vector")
}

// checkResponseStream reads a Responses API stream as the SDKs accumulate
// it and checks that the deltas and every full text agree on want, and
// that response.completed carries the sufficiency object.
func checkResponseStream(t testing.TB, b []byte, want, level string) {
	t.Helper()
	var deltas string
	var fulls []string
	var final *responseObj
	lastSeq := -1
	for _, ev := range strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n") {
		name, data, ok := strings.Cut(ev, "\n")
		if !ok || !strings.HasPrefix(name, "event: ") || !strings.HasPrefix(data, "data: ") {
			t.Fatalf("event %q", ev)
		}
		var e struct {
			Type     string
			Seq      int `json:"sequence_number"`
			Delta    string
			Text     string
			Part     struct{ Text string }
			Item     responseObj
			Response *responseObj
		}
		decode(t, []byte(data[len("data: "):]), &e)
		if "event: "+e.Type != name || e.Seq < lastSeq {
			t.Fatalf("event %q: type %s seq %d after %d", name, e.Type, e.Seq, lastSeq)
		}
		lastSeq = e.Seq
		switch e.Type {
		case "response.output_text.delta":
			deltas += e.Delta
		case "response.output_text.done":
			fulls = append(fulls, e.Text)
		case "response.content_part.done":
			fulls = append(fulls, e.Part.Text)
		case "response.completed":
			final = e.Response
			fulls = append(fulls, final.text())
		}
	}
	if deltas != want {
		t.Fatalf("deltas %q, want %q\n%s", deltas, want, b)
	}
	for _, f := range fulls {
		if f != want {
			t.Fatalf("a full text %q, want %q\n%s", f, want, b)
		}
	}
	if final == nil || final.Suff == nil || final.Suff.Level != level {
		t.Fatalf("response.completed without sufficiency %s: %s", level, b)
	}
}

// TestResponsesCaveatSuffix: the suffix goes in a delta of its own before
// the part's output_text.done.
func TestResponsesCaveatSuffix(t *testing.T) {
	up := newUpstream(t, "")
	up.handler = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, responseEvents("Open", " Settings [S1]."))
	}
	s := start(t, Options{Upstream: up.ts.URL, CaveatDelivery: CaveatSuffix})
	caveat := mustDecision(t, post(t, s.url+"/v1/gate", request(t, "default", "caveat")).body)
	r := post(t, s.url+"/v1/responses", responsesFor(t, request(t, "default", "caveat"), true, true))
	checkResponseStream(t, r.body, "Open Settings [S1].\n\n"+caveat.Caveat, "partial")
}

// TestResponsesRefusal: a refused Responses API request is answered
// locally: a completed response with the refusal as its text, its own ids
// and time, streamed as the Responses API's events when asked.
func TestResponsesRefusal(t *testing.T) {
	up := newUpstream(t, "")
	s := start(t, Options{Upstream: up.ts.URL})
	refuse := request(t, "default", "refuse_off_topic")
	d := mustDecision(t, post(t, s.url+"/v1/gate", refuse).body)
	r := post(t, s.url+"/v1/responses", responsesFor(t, refuse, false, false))
	var resp responseObj
	decode(t, r.body, &resp)
	if r.status != 200 || up.calls.Load() != 0 || r.header.Get(HeaderRefusal) != "hard" || !strings.HasPrefix(resp.ID, "resp_ctxgate_") ||
		resp.Object != "response" || resp.Status != "completed" || resp.Model != "test-model" || resp.text() != d.Refusal.Message ||
		resp.CreatedAt < time.Now().Unix()-60 || resp.Suff == nil || resp.Suff.Level != "insufficient" || !strings.HasPrefix(resp.Output[0].ID, "msg_ctxgate_") {
		t.Fatalf("%d %s", r.status, r.body)
	}
	r = post(t, s.url+"/v1/responses", responsesFor(t, refuse, true, false))
	if r.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream refusal %v", r.header)
	}
	checkResponseStream(t, r.body, d.Refusal.Message, "insufficient")
}
