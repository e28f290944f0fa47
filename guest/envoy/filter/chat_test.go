package filter

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate"
)

func defaultConfig(t testing.TB, js string) *Config {
	t.Helper()
	c, err := ParseConfig([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// canon re-encodes JSON through encoding/json (tests only) so expectations
// need not match the splicer's separators.
func canon(t testing.TB, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestChatGateRequest(t *testing.T) {
	tests := []struct {
		name, cfg, body string
		want            string // gate request, canonical
		err             string // error code[:field]
	}{
		{
			name: "documents and last user message",
			body: `{"model":"m","messages":[{"role":"user","content":"first"},{"role":"assistant","content":"a"},
				{"role":"user","content":"what is \"x\"?"}],"documents":[{"id":"a","text":"t"}]}`,
			want: `{"chunks":[{"id":"a","text":"t"}],"query":"what is \"x\"?"}`,
		},
		{
			name: "multimodal content: first text part",
			body: `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u"}},
				{"type":"text","text":"describe"}]}],"documents":[]}`,
			want: `{"chunks":[],"query":"describe"}`,
		},
		{
			name: "extension object keeps its members, query from messages",
			body: `{"messages":[{"role":"user","content":"q"}],"ctxgate":{"chunks":[{"id":"c"}],"query_embedding":[0.5,1e-3]}}`,
			want: `{"chunks":[{"id":"c"}],"query":"q","query_embedding":[0.5,0.001]}`,
		},
		{
			name: "extension query wins over messages",
			body: `{"messages":[{"role":"user","content":"q"}],"ctxgate":{"query":"own","chunks":[]}}`,
			want: `{"chunks":[],"query":"own"}`,
		},
		{
			name: "configured paths",
			cfg:  `{"documents_path":"input.docs","query_path":"input.question"}`,
			body: `{"input":{"question":"why","docs":[{"id":"d"}]}}`,
			want: `{"chunks":[{"id":"d"}],"query":"why"}`,
		},
		{
			name: "escaped member name is the same member",
			body: `{"messages":[{"role":"user","content":"q"}],"docum\u0065nts":[]}`,
			want: `{"chunks":[],"query":"q"}`,
		},
		{name: "no documents is not gated", body: `{"messages":[{"role":"user","content":"q"}]}`, err: "not_gated"},
		{name: "not JSON", body: `{"messages":[`, err: "bad_json"},
		{name: "trailing garbage", body: `{} x`, err: "bad_json"},
		{name: "duplicate documents", body: `{"documents":[],"documents":[]}`, err: "bad_json"},
		{name: "array body", body: `[]`, err: "bad_json"},
		{name: "documents not an array", body: `{"documents":{}}`, err: "bad_field:documents"},
		{name: "extension not an object", body: `{"ctxgate":[]}`, err: "bad_field:ctxgate"},
		{name: "both documents and extension chunks", body: `{"documents":[],"ctxgate":{"chunks":[]}}`, err: "bad_field:documents"},
		{name: "no user message", body: `{"messages":[{"role":"system","content":"s"}],"documents":[]}`, err: "bad_field:messages"},
		{name: "messages not an array", body: `{"messages":{},"documents":[]}`, err: "bad_field:messages"},
		{name: "query path missing", cfg: `{"query_path":"q"}`, body: `{"documents":[]}`, err: "bad_field:q"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseChat([]byte(tt.body), defaultConfig(t, tt.cfg))
			if tt.err != "" {
				ge, ok := err.(*gate.Error)
				if !ok {
					t.Fatalf("err = %v, want *gate.Error %s", err, tt.err)
				}
				got := ge.Code
				if ge.Field != "" {
					got += ":" + ge.Field
				}
				if got != tt.err {
					t.Fatalf("err = %s (%v), want %s", got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := canon(t, c.gateRequest(nil)); got != canon(t, []byte(tt.want)) {
				t.Errorf("gate request = %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestChatRewrite(t *testing.T) {
	body := `{"model":"gpt","messages":[{"role":"system","content":"app"},{"role":"user","content":"old"},
		{"role":"assistant","content":"x"},{"name":"u","role":"user","content":"q?"}],
		"temperature":0,"documents":[{"id":"a"}],"ctxgate":{"query_embedding":[1]},"stream":false}`
	c, err := parseChat([]byte(body), defaultConfig(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	sys := "Answer ONLY...\n\n<sources>\n[S1] a & <b>\n</sources>"

	got := c.rewrite(nil, sys, "", false)
	want := `{"model":"gpt","messages":[{"role":"system","content":"app"},{"role":"user","content":"old"},
		{"role":"assistant","content":"x"},{"role":"system","content":` + string(mustJSON(sys)) + `},
		{"name":"u","role":"user","content":"q?"}],"temperature":0,"stream":false}`
	if canon(t, got) != canon(t, []byte(want)) {
		t.Errorf("inject rewrite =\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(string(got), `"documents"`) || strings.Contains(string(got), `"ctxgate"`) {
		t.Errorf("rewrite kept the raw documents: %s", got)
	}
	// Untouched members keep their exact bytes.
	if !strings.Contains(string(got), `{"role":"system","content":"app"}`) || !strings.Contains(string(got), `"temperature":0`) {
		t.Errorf("rewrite changed bytes it does not own: %s", got)
	}

	got = c.rewrite(nil, "", "minimal prompt: q?", true)
	want = `{"model":"gpt","messages":[{"role":"system","content":"app"},{"role":"user","content":"old"},
		{"role":"assistant","content":"x"},{"name":"u","role":"user","content":"minimal prompt: q?"}],
		"temperature":0,"stream":false}`
	if canon(t, got) != canon(t, []byte(want)) {
		t.Errorf("fallback rewrite =\n%s\nwant\n%s", got, want)
	}
}

func TestChatRewriteNestedDocuments(t *testing.T) {
	body := `{"messages":[{"role":"user","content":"q"}],"extra":{"k":1,"docs":[{"id":"a"}],"z":2}}`
	c, err := parseChat([]byte(body), defaultConfig(t, `{"documents_path":"extra.docs"}`))
	if err != nil {
		t.Fatal(err)
	}
	got := c.rewrite(nil, "", "", false)
	want := `{"messages":[{"role":"user","content":"q"}],"extra":{"k":1,"z":2}}`
	if canon(t, got) != canon(t, []byte(want)) {
		t.Errorf("rewrite = %s, want %s", got, want)
	}
}

func mustJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

func TestPathMatches(t *testing.T) {
	tests := []struct {
		path, prefix string
		want         bool
	}{
		{"/v1/chat/completions", "/v1/chat/completions", true},
		{"/v1/chat/completions?x=1", "/v1/chat/completions", true},
		{"/v1/chat/completions/", "/v1/chat/completions", true},
		{"/v1/chat/completionsX", "/v1/chat/completions", false},
		{"/v1/embeddings", "/v1/chat/completions", false},
		{"/openai/v1/chat/completions", "/openai/", true},
	}
	for _, tt := range tests {
		if got := pathMatches(tt.path, tt.prefix); got != tt.want {
			t.Errorf("pathMatches(%q, %q) = %v", tt.path, tt.prefix, got)
		}
	}
}

func TestRefusalReplies(t *testing.T) {
	msg := "I don't have enough information to answer that."
	var c struct {
		Object  string
		Model   string
		Choices []struct {
			Message struct{ Role, Content string }
			Finish  string `json:"finish_reason"`
		}
	}
	if err := json.Unmarshal(refusalCompletion(nil, []byte(`"gpt-x"`), msg), &c); err != nil {
		t.Fatal(err)
	}
	if c.Object != "chat.completion" || c.Model != "gpt-x" || len(c.Choices) != 1 ||
		c.Choices[0].Message.Content != msg || c.Choices[0].Message.Role != "assistant" || c.Choices[0].Finish != "stop" {
		t.Errorf("completion = %+v", c)
	}

	sse := string(refusalStream(nil, nil, msg))
	events := strings.Split(strings.TrimSuffix(sse, "\n\n"), "\n\n")
	if len(events) != 3 || events[2] != "data: [DONE]" {
		t.Fatalf("stream events = %q", events)
	}
	var chunk struct {
		Object  string
		Model   string
		Choices []struct{ Delta struct{ Content string } }
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(events[0], "data: ")), &chunk); err != nil {
		t.Fatal(err)
	}
	if chunk.Object != "chat.completion.chunk" || chunk.Model != "ctxgate" || chunk.Choices[0].Delta.Content != msg {
		t.Errorf("first chunk = %+v", chunk)
	}
}
