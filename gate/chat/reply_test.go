package chat

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestRefusalReplies(t *testing.T) {
	msg := "I don't have enough information to answer that. \"<S1>\""
	for _, model := range []string{`"gpt-x"`, ""} {
		wantModel := strings.Trim(model, `"`)
		if model == "" {
			wantModel = "ctxgate"
		}
		var c struct {
			ID      string
			Object  string
			Created int
			Model   string
			Choices []struct {
				Message struct{ Role, Content string }
				Finish  string `json:"finish_reason"`
			}
		}
		b := RefusalCompletion([]byte(nil), []byte(model), msg)
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		if c.ID != RefusalID || c.Created != 0 || c.Object != "chat.completion" || c.Model != wantModel || len(c.Choices) != 1 ||
			c.Choices[0].Message.Content != msg || c.Choices[0].Message.Role != "assistant" || c.Choices[0].Finish != "stop" {
			t.Errorf("completion = %+v", c)
		}
		if b[len(b)-1] != '}' {
			t.Errorf("completion does not end with its closing brace: %s", b)
		}

		sse := string(RefusalStream(nil, []byte(model), msg))
		events := strings.Split(strings.TrimSuffix(sse, "\n\n"), "\n\n")
		if len(events) != 3 || events[2] != "data: [DONE]" {
			t.Fatalf("stream events = %q", events)
		}
		var chunks [2]struct {
			Object  string
			Model   string
			Choices []struct {
				Delta  struct{ Role, Content string }
				Finish *string `json:"finish_reason"`
			}
		}
		for i := range chunks {
			if err := json.Unmarshal([]byte(strings.TrimPrefix(events[i], "data: ")), &chunks[i]); err != nil {
				t.Fatal(err)
			}
			if chunks[i].Object != "chat.completion.chunk" || chunks[i].Model != wantModel || len(chunks[i].Choices) != 1 {
				t.Errorf("chunk %d = %+v", i, chunks[i])
			}
		}
		if d := chunks[0].Choices[0]; d.Delta.Content != msg || d.Delta.Role != "assistant" || d.Finish != nil {
			t.Errorf("first chunk = %+v", d)
		}
		if d := chunks[1].Choices[0]; d.Delta.Content != "" || d.Finish == nil || *d.Finish != "stop" {
			t.Errorf("last chunk = %+v", d)
		}
	}
}

func TestAnswerContent(t *testing.T) {
	tests := []struct {
		body string
		want string
		ok   bool
	}{
		{`{"choices":[{"message":{"role":"assistant","content":"A [S1]."}}]}`, "A [S1].", true},
		{`{"choices":[{"message":{"content":"first"}},{"message":{"content":"second"}}]}`, "first", true},
		{`{"choices":[{"message":{"content":null}}]}`, "", false},
		{`{"choices":[]}`, "", false},
		{`{"choices":{"message":{"content":"x"}}}`, "", false},
		{`[1]`, "", false},
		{`not json`, "", false},
		{``, "", false},
	}
	for _, tt := range tests {
		got, ok := AnswerContent([]byte(tt.body))
		if got != tt.want || ok != tt.ok {
			t.Errorf("AnswerContent(%s) = %q, %v; want %q, %v", tt.body, got, ok, tt.want, tt.ok)
		}
	}
}

// TestRefusalAs: the host's id and time, in both the completion and every
// chunk of the stream.
func TestRefusalAs(t *testing.T) {
	b := RefusalCompletionAs(nil, `chatcmpl-ctxgate-"x"`, 1700000001, []byte(`"m"`), "no")
	var c struct {
		ID      string
		Created int64
	}
	if err := json.Unmarshal(b, &c); err != nil || c.ID != `chatcmpl-ctxgate-"x"` || c.Created != 1700000001 {
		t.Fatalf("completion %s: %+v %v", b, c, err)
	}
	sse := string(RefusalStreamAs(nil, "chatcmpl-ctxgate-1", 1700000002, nil, "no"))
	if !strings.HasSuffix(sse, StreamDone) {
		t.Fatalf("stream does not end with StreamDone: %q", sse)
	}
	for _, e := range strings.Split(strings.TrimSuffix(sse, "\n\n"+StreamDone), "\n\n") {
		if err := json.Unmarshal([]byte(strings.TrimPrefix(e, "data: ")), &c); err != nil || c.ID != "chatcmpl-ctxgate-1" || c.Created != 1700000002 {
			t.Fatalf("chunk %s: %+v %v", e, c, err)
		}
	}
}

func TestUnknownCitations(t *testing.T) {
	many := make([]string, 1000)
	for i := range many {
		many[i] = "S" + strconv.Itoa(i+2)
	}
	for _, c := range []struct {
		tags []string
		want string
	}{
		{nil, ""},
		{[]string{"S7"}, "S7"},
		{[]string{"S7", "S9"}, "S7,S9"},
		{many[:MaxUnknownCitations], strings.Join(many[:MaxUnknownCitations], ",")},
		{many, strings.Join(many[:MaxUnknownCitations], ",") + ",..."},
	} {
		if got := UnknownCitations(c.tags); got != c.want {
			t.Errorf("%d tags: %q, want %q", len(c.tags), got, c.want)
		}
	}
}
