package chat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// TestParseResponses: a Responses API body is found and gated like a chat
// body, with "input" (a string or a list of items) as the conversation.
func TestParseResponses(t *testing.T) {
	tests := []struct {
		name, body string
		want       string // gate request, canonical
		err        string // error code[:field]
	}{
		{
			name: "input string is the question",
			body: `{"model":"m","input":"how do I reset?","documents":[{"id":"a","text":"t"}]}`,
			want: `{"chunks":[{"id":"a","text":"t"}],"query":"how do I reset?"}`,
		},
		{
			name: "input items: the last user message's input_text part",
			body: `{"input":[{"role":"user","content":"old"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a"}]},
				{"type":"message","role":"user","content":[{"type":"input_image","image_url":"u"},{"type":"input_text","text":"new"}]}],"documents":[]}`,
			want: `{"chunks":[],"query":"new"}`,
		},
		{
			name: "function call outputs are not messages",
			body: `{"input":[{"role":"user","content":"q"},{"type":"function_call_output","call_id":"c","output":"{}"}],"documents":[]}`,
			want: `{"chunks":[],"query":"q"}`,
		},
		{
			name: "extension form",
			body: `{"input":"q","ctxgate":{"chunks":[{"id":"c"}],"now":"2025-01-01T00:00:00Z"}}`,
			want: `{"chunks":[{"id":"c"}],"now":"2025-01-01T00:00:00Z","query":"q"}`,
		},
		{name: "no documents", body: `{"input":"q"}`, err: "not_gated"},
		{name: "input neither string nor list", body: `{"input":{"role":"user"},"documents":[]}`, err: "bad_field:input"},
		{name: "no user text", body: `{"input":[{"role":"assistant","content":"x"}],"documents":[]}`, err: "bad_field:input"},
		{name: "messages is not the Responses conversation", body: `{"messages":[{"role":"user","content":"q"}],"documents":[]}`, err: "bad_field:input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseResponses([]byte(tt.body), defaultDocs, nil)
			if tt.err != "" {
				if err == nil {
					t.Fatalf("no error, want %s", tt.err)
				}
				if s := errString(t, err); s != tt.err {
					t.Fatalf("err = %s, want %s", s, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.GateRequest(nil); canon(t, got) != canon(t, []byte(tt.want)) {
				t.Errorf("gate request =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestResponsesUserField: errors name the body's own fields.
func TestResponsesUserField(t *testing.T) {
	c, err := ParseResponses([]byte(`{"input":[{"role":"system","content":"s"},{"role":"user","content":"q"}],"documents":[]}`), defaultDocs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.UserField(&gate.Error{Code: "bad_field", Field: "query", Message: "m"}).(*gate.Error).Field; got != "input[1].content" {
		t.Errorf("query field = %q", got)
	}
	c, _ = ParseResponses([]byte(`{"input":"q","documents":[]}`), defaultDocs, nil)
	if got := c.UserField(&gate.Error{Code: "bad_field", Field: "query", Message: "m"}).(*gate.Error).Field; got != "input" {
		t.Errorf("query field of a string input = %q", got)
	}
}

func TestResponsesUpstream(t *testing.T) {
	p := Prompt{Instructions: "I", Sources: "S", Minimal: "M", Caveat: "C"}
	tests := []struct {
		name   string
		body   string
		action gate.Action
		want   string // canonical
		err    string
	}{
		{"inject, string input becomes a list", `{"model":"m","input":"q?","documents":[],"stream":true}`, gate.ActionInject,
			`{"model":"m","input":[{"role":"system","content":"I\n\nS"},{"role":"user","content":"q?"}],"stream":true}`, ""},
		{"inject, items", `{"input":[{"role":"developer","content":"d"},{"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]}],"documents":[]}`, gate.ActionInject,
			`{"input":[{"role":"developer","content":"d"},{"role":"system","content":"I\n\nS"},{"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]}]}`, ""},
		{"fallback, string input", `{"input":"q?","documents":[]}`, gate.ActionFallback,
			`{"input":[{"role":"user","content":"M"}]}`, ""},
		{"fallback, items", `{"input":[{"role":"user","content":"q"}],"documents":[]}`, gate.ActionFallback,
			`{"input":[{"role":"user","content":"M"}]}`, ""},
		{"inject without a user message", `{"input":[{"role":"system","content":"s"}],"ctxgate":{"query":"q","chunks":[]}}`, gate.ActionInject, "", "bad_field:input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseResponses([]byte(tt.body), defaultDocs, nil)
			if err != nil {
				t.Fatal(err)
			}
			pp := p
			pp.Action = tt.action
			got, err := c.Upstream(nil, &pp)
			if tt.err != "" {
				if err == nil || errString(t, err) != tt.err {
					t.Fatalf("err = %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if canon(t, got) != canon(t, []byte(tt.want)) {
				t.Errorf("upstream =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestResponseRefusal(t *testing.T) {
	ids := ResponseIDs{Response: "resp_1", Message: "msg_1", Created: 1700000000}
	msg := `No "sources" cover this.`
	b := ResponseRefusal(nil, ids, []byte(`"gpt-x"`), msg)
	var r struct {
		ID, Object, Status, Model string
		CreatedAt                 int64 `json:"created_at"`
		Output                    []struct {
			Type, ID, Role, Status string
			Content                []struct{ Type, Text string }
		}
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if r.ID != "resp_1" || r.Object != "response" || r.Status != "completed" || r.Model != "gpt-x" || r.CreatedAt != ids.Created ||
		len(r.Output) != 1 || r.Output[0].ID != "msg_1" || r.Output[0].Role != "assistant" || len(r.Output[0].Content) != 1 ||
		r.Output[0].Content[0].Type != "output_text" || r.Output[0].Content[0].Text != msg {
		t.Fatalf("refusal = %+v", r)
	}
	root, _ := jsonx.Parse(b, MaxDepth)
	if text, ok := ResponseText(&root); !ok || text != msg {
		t.Errorf("ResponseText = %q, %v", text, ok)
	}

	sse := string(ResponseRefusalStream(nil, ids, nil, msg, func(dst []byte) []byte { return append(dst, `,"extra":1`...) }))
	events := strings.Split(strings.TrimSuffix(sse, "\n\n"), "\n\n")
	wantTypes := []string{"response.created", "response.output_item.added", "response.content_part.added", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if len(events) != len(wantTypes) {
		t.Fatalf("%d events: %q", len(events), events)
	}
	for i, e := range events {
		name, data, ok := strings.Cut(e, "\n")
		if !ok || name != "event: "+wantTypes[i] || !strings.HasPrefix(data, "data: ") {
			t.Fatalf("event %d = %q", i, e)
		}
		var ev struct {
			Type     string
			Seq      int `json:"sequence_number"`
			Delta    string
			Response *struct {
				Status string
				Model  string
				Extra  int
			}
		}
		if err := json.Unmarshal([]byte(data[len("data: "):]), &ev); err != nil {
			t.Fatalf("event %d: %v: %s", i, err, data)
		}
		if ev.Type != wantTypes[i] || ev.Seq != i {
			t.Errorf("event %d: type %q seq %d", i, ev.Type, ev.Seq)
		}
		switch ev.Type {
		case "response.output_text.delta":
			if ev.Delta != msg {
				t.Errorf("delta %q", ev.Delta)
			}
		case "response.created":
			if ev.Response.Status != "in_progress" || ev.Response.Model != "ctxgate" {
				t.Errorf("created %+v", ev.Response)
			}
		case "response.completed":
			if ev.Response.Status != "completed" || ev.Response.Extra != 1 {
				t.Errorf("completed %+v", ev.Response)
			}
		}
	}
}

func TestResponseText(t *testing.T) {
	tests := []struct {
		body string
		want string
		ok   bool
	}{
		{`{"output":[{"type":"reasoning","summary":[]},{"type":"message","content":[{"type":"output_text","text":"A "},{"type":"refusal","refusal":"x"},{"type":"output_text","text":"[S1]."}]}]}`, "A [S1].", true},
		{`{"output":[{"type":"function_call","arguments":"{}"}]}`, "", false},
		{`{"output":"x"}`, "", false},
		{`{}`, "", false},
	}
	for _, tt := range tests {
		root, err := jsonx.Parse([]byte(tt.body), MaxDepth)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := ResponseText(&root); got != tt.want || ok != tt.ok {
			t.Errorf("ResponseText(%s) = %q, %v; want %q, %v", tt.body, got, ok, tt.want, tt.ok)
		}
	}
}
