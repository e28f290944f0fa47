package chat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate"
)

var defaultDocs = []string{"documents"}

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

func mustJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// errString is "code" or "code:field" of a *gate.Error.
func errString(t testing.TB, err error) string {
	t.Helper()
	ge, ok := err.(*gate.Error)
	if !ok {
		t.Fatalf("err = %v (%T), want a *gate.Error", err, err)
	}
	if ge.Field != "" {
		return ge.Code + ":" + ge.Field
	}
	return ge.Code
}

func split(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, ".")
}

func TestParseGateRequest(t *testing.T) {
	tests := []struct {
		name, docs, query, body string
		want                    string // gate request, canonical
		err                     string // error code[:field]
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
			name: "escaped role and part type are the same strings",
			body: `{"messages":[{"role":"us\u0065r","content":[{"type":"t\u0065xt","text":"esc"}]}],"documents":[]}`,
			want: `{"chunks":[],"query":"esc"}`,
		},
		{
			name: "a later user message without text leaves no question",
			body: `{"messages":[{"role":"user","content":"old"},{"role":"user","content":[{"type":"image_url"}]}],"documents":[]}`,
			err:  "bad_field:messages",
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
			name: "extension query and no messages",
			body: `{"ctxgate":{"query":"own","chunks":[]}}`,
			want: `{"chunks":[],"query":"own"}`,
		},
		{
			name: "configured paths", docs: "input.docs", query: "input.question",
			body: `{"input":{"question":"why","docs":[{"id":"d"}]}}`,
			want: `{"chunks":[{"id":"d"}],"query":"why"}`,
		},
		{
			name: "no documents path: only the extension is read", docs: "-",
			body: `{"messages":[{"role":"user","content":"q"}],"documents":[{"id":"x"}],"ctxgate":{"chunks":[]}}`,
			want: `{"chunks":[],"query":"q"}`,
		},
		{
			name: "escaped member name is the same member",
			body: `{"messages":[{"role":"user","content":"q"}],"docum\u0065nts":[]}`,
			want: `{"chunks":[],"query":"q"}`,
		},
		{name: "no documents is not gated", body: `{"messages":[{"role":"user","content":"q"}]}`, err: "not_gated"},
		{name: "no documents path and no extension is not gated", docs: "-", body: `{"documents":[]}`, err: "not_gated"},
		{name: "not JSON", body: `{"messages":[`, err: "bad_json"},
		{name: "empty body", body: ``, err: "bad_json"},
		{name: "trailing garbage", body: `{} x`, err: "bad_json"},
		{name: "duplicate documents", body: `{"documents":[],"documents":[]}`, err: "bad_json"},
		{name: "array body", body: `[]`, err: "bad_json"},
		{name: "string body", body: ` "x" `, err: "bad_json"},
		{name: "documents not an array", body: `{"documents":{}}`, err: "bad_field:documents"},
		{name: "nested documents not an array", docs: "a.b", body: `{"a":{"b":1}}`, err: "bad_field:a.b"},
		{name: "extension not an object", body: `{"ctxgate":[]}`, err: "bad_field:ctxgate"},
		{name: "both documents and extension chunks", body: `{"documents":[],"ctxgate":{"chunks":[]}}`, err: "bad_field:documents"},
		{name: "no user message", body: `{"messages":[{"role":"system","content":"s"}],"documents":[]}`, err: "bad_field:messages"},
		{name: "messages not an array", body: `{"messages":{},"documents":[]}`, err: "bad_field:messages"},
		{name: "query path missing", query: "q", body: `{"documents":[]}`, err: "bad_field:q"},
		{name: "query path not a string", query: "q", body: `{"documents":[],"q":1}`, err: "bad_field:q"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs := defaultDocs
			if tt.docs == "-" {
				docs = nil
			} else if tt.docs != "" {
				docs = split(tt.docs)
			}
			c, err := Parse([]byte(tt.body), docs, split(tt.query))
			if tt.err != "" {
				if got := errString(t, err); got != tt.err {
					t.Fatalf("err = %s (%v), want %s", got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := canon(t, c.GateRequest(nil)); got != canon(t, []byte(tt.want)) {
				t.Errorf("gate request = %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestGateRequestKeepsBytes: the gate request is spliced, so the chunks and
// the extension's members reach the core exactly as the client wrote them
// (numbers, escapes), and dst is appended to.
func TestGateRequestKeepsBytes(t *testing.T) {
	body := `{"messages":[{"role":"user","content":"caf\u00e9"}],"ctxgate":{"query_embedding":[1.50, -2E3]},"documents":[{"id":"a","text":"x\/y"}]}`
	c, err := Parse([]byte(body), defaultDocs, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := string(c.GateRequest([]byte("prefix")))
	want := `prefix{"query_embedding":[1.50, -2E3],"query":"caf\u00e9","chunks":[{"id":"a","text":"x\/y"}]}`
	if got != want {
		t.Errorf("gate request\n got %s\nwant %s", got, want)
	}
}

func TestUserField(t *testing.T) {
	tests := []struct {
		name, docs, query, body, field, want string
	}{
		{"chunk field becomes documents", "", "", `{"messages":[{"role":"user","content":"q"}],"documents":[]}`, "chunks[2].scores.vector", "documents[2].scores.vector"},
		{"nested documents path", "extra.docs", "", `{"messages":[{"role":"user","content":"q"}],"extra":{"docs":[]}}`, "chunks[0].text", "extra.docs[0].text"},
		{"query from the last user message", "", "", `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"q"}],"documents":[]}`, "query", "messages[1].content"},
		{"query from the query path", "", "input.q", `{"input":{"q":"x"},"documents":[]}`, "query", "input.q"},
		{"extension member", "", "", `{"messages":[{"role":"user","content":"q"}],"ctxgate":{"chunks":[],"now":"x"}}`, "now", "ctxgate.now"},
		{"extension chunks", "", "", `{"messages":[{"role":"user","content":"q"}],"ctxgate":{"chunks":[]}}`, "chunks[0].id", "ctxgate.chunks[0].id"},
		{"extension's own query", "", "", `{"messages":[{"role":"user","content":"q"}],"ctxgate":{"query":"","chunks":[]}}`, "query", "ctxgate.query"},
		{"unknown root without extension stays", "", "", `{"messages":[{"role":"user","content":"q"}],"documents":[]}`, "now", "now"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs := defaultDocs
			if tt.docs != "" {
				docs = split(tt.docs)
			}
			c, err := Parse([]byte(tt.body), docs, split(tt.query))
			if err != nil {
				t.Fatal(err)
			}
			in := &gate.Error{Code: gate.CodeBadField, Field: tt.field, Message: "m"}
			got := c.UserField(in).(*gate.Error)
			if got.Field != tt.want || got.Code != in.Code || got.Message != in.Message {
				t.Errorf("UserField(%s) = %+v, want field %s", tt.field, got, tt.want)
			}
			if in.Field != tt.field {
				t.Error("UserField changed its argument")
			}
		})
	}
	c, _ := Parse([]byte(`{"documents":[],"ctxgate":{"query":"q"}}`), defaultDocs, nil)
	for _, err := range []error{nil, ErrNotGated, &gate.Error{Code: gate.CodeBadJSON, Message: "x"}, (*gate.Error)(nil)} {
		if got := c.UserField(err); got != err {
			t.Errorf("UserField(%v) = %v, want it unchanged", err, got)
		}
	}
}

func TestAccessors(t *testing.T) {
	tests := []struct {
		name, body  string
		stream      bool
		model       string
		hasUser     bool
		query, embd string
	}{
		{"plain", `{"model":"gpt-x","stream":true,"messages":[{"role":"user","content":"why \u00e9?"}],"documents":[]}`,
			true, `"gpt-x"`, true, "why é?", ""},
		{"stream false, model not a string", `{"model":1,"stream":false,"messages":[{"role":"user","content":"q"}],"documents":[]}`,
			false, "", true, "q", ""},
		{"extension query and embedding", "{\"ctxgate\":{\"query\":\"own\",\"chunks\":[],\"query_embedding\":[ 0.5 ,\n -1e-3 ]},\"messages\":[{\"role\":\"user\",\"content\":\"q\"}]}",
			false, "", true, "own", "[0.5,-1e-3]"},
		{"empty embedding", `{"ctxgate":{"query":"own","chunks":[],"query_embedding":[ ]}}`, false, "", false, "own", ""},
		{"embedding not an array", `{"ctxgate":{"query":"own","chunks":[],"query_embedding":"x"}}`, false, "", false, "own", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.body), defaultDocs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.Stream() != tt.stream || string(c.Model()) != tt.model || c.HasLastUser() != tt.hasUser ||
				c.QueryText() != tt.query || string(c.AppendQueryEmbedding(nil)) != tt.embd {
				t.Errorf("got stream %v model %s user %v query %q embedding %s", c.Stream(), c.Model(), c.HasLastUser(), c.QueryText(), c.AppendQueryEmbedding(nil))
			}
		})
	}
}

func TestAppendCompact(t *testing.T) {
	for in, want := range map[string]string{
		"[ 1, 2 ,\n3 ]":                  "[1,2,3]",
		`{ "a b" : "c \" d\\" , "e":[]}`: `{"a b":"c \" d\\","e":[]}`,
		"\t\"\\u0020 x\"\r\n":            `"\u0020 x"`,
	} {
		if got := string(AppendCompact([]byte("."), []byte(in))); got != "."+want {
			t.Errorf("AppendCompact(%q) = %q, want %q", in, got, "."+want)
		}
	}
}

const rewriteBody = `{"model":"gpt","messages":[{"role":"system","content":"app"},{"role":"user","content":"old"},
	{"role":"assistant","content":"x"},{"name":"u","role":"user","content":"q?"}],
	"temperature":0,"documents":[{"id":"a"}],"ctxgate":{"query_embedding":[1]},"stream":false}`

func TestRewrite(t *testing.T) {
	sys := "Answer ONLY...\n\n<sources>\n[S1] a & <b>\n</sources>"
	tests := []struct {
		name, docs, body string
		system, user     string
		replace          bool
		want             string // canonical
	}{
		{
			name: "system message before the last user message", body: rewriteBody, system: sys,
			want: `{"model":"gpt","messages":[{"role":"system","content":"app"},{"role":"user","content":"old"},
				{"role":"assistant","content":"x"},{"role":"system","content":` + string(mustJSON(sys)) + `},
				{"name":"u","role":"user","content":"q?"}],"temperature":0,"stream":false}`,
		},
		{
			name: "user content replaced", body: rewriteBody, user: "minimal prompt: q?", replace: true,
			want: `{"model":"gpt","messages":[{"role":"system","content":"app"},{"role":"user","content":"old"},
				{"role":"assistant","content":"x"},{"name":"u","role":"user","content":"minimal prompt: q?"}],
				"temperature":0,"stream":false}`,
		},
		{
			name: "documents only dropped", body: rewriteBody,
			want: `{"model":"gpt","messages":[{"role":"system","content":"app"},{"role":"user","content":"old"},
				{"role":"assistant","content":"x"},{"name":"u","role":"user","content":"q?"}],"temperature":0,"stream":false}`,
		},
		{
			name: "nested documents", docs: "extra.docs",
			body: `{"messages":[{"role":"user","content":"q"}],"extra":{"k":1,"docs":[{"id":"a"}],"z":2}}`,
			want: `{"messages":[{"role":"user","content":"q"}],"extra":{"k":1,"z":2}}`,
		},
		{
			name: "nested documents and replaced user content", docs: "extra.docs",
			body: `{"extra":{"docs":[]},"messages":[{"role":"user","content":[{"type":"text","text":"q"}]}]}`,
			user: "min", replace: true,
			want: `{"extra":{},"messages":[{"role":"user","content":"min"}]}`,
		},
		{
			name: "user message with only content", user: "min", replace: true,
			body: `{"messages":[{"content":"q","role":"user"}],"documents":[]}`,
			want: `{"messages":[{"role":"user","content":"min"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs := defaultDocs
			if tt.docs != "" {
				docs = split(tt.docs)
			}
			c, err := Parse([]byte(tt.body), docs, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := c.Rewrite([]byte("x"), tt.system, tt.user, tt.replace)
			if got[0] != 'x' {
				t.Fatalf("Rewrite did not append to dst: %s", got)
			}
			got = got[1:]
			if canon(t, got) != canon(t, []byte(tt.want)) {
				t.Errorf("rewrite =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestRewriteKeepsBytes: members the rewrite does not own keep their exact
// bytes (escapes, number spelling), so the upstream sees what the client sent.
func TestRewriteKeepsBytes(t *testing.T) {
	body := `{"model":"g\u00e9", "messages":[{"role":"system","content":"a\/b"},{"role":"user","content":"q"}], "temperature":1.0E0,"documents":[]}`
	c, err := Parse([]byte(body), defaultDocs, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := string(c.Rewrite(nil, "sys", "", false))
	want := `{"model":"g\u00e9","messages":[{"role":"system","content":"a\/b"},{"role":"system","content":"sys"},{"role":"user","content":"q"}],"temperature":1.0E0}`
	if got != want {
		t.Errorf("rewrite\n got %s\nwant %s", got, want)
	}
}

func TestUpstream(t *testing.T) {
	p := Prompt{Instructions: "I", Sources: "<sources>\n[S1] a\n</sources>", Minimal: "M", Caveat: "C"}
	noUser := `{"messages":[{"role":"system","content":"s"}],"ctxgate":{"query":"q","chunks":[]}}`
	tests := []struct {
		name   string
		body   string
		action gate.Action
		edit   func(*Prompt)
		want   string // canonical; "" when err is set
		err    string
	}{
		{"inject", rewriteBody, gate.ActionInject, nil, rewriteWith(`{"role":"system","content":"I\n\n<sources>\n[S1] a\n</sources>"},{"name":"u","role":"user","content":"q?"}`), ""},
		{"caveat adds the caveat", rewriteBody, gate.ActionCaveat, nil, rewriteWith(`{"role":"system","content":"I\n\n<sources>\n[S1] a\n</sources>\n\nC"},{"name":"u","role":"user","content":"q?"}`), ""},
		{"fallback: minimal prompt", rewriteBody, gate.ActionFallback, nil, rewriteWith(`{"name":"u","role":"user","content":"M"}`), ""},
		{"fallback without a minimal prompt", rewriteBody, gate.ActionFallback, func(p *Prompt) { p.Minimal = "" }, rewriteWith(`{"name":"u","role":"user","content":"q?"}`), ""},
		{"fallback without a user message", noUser, gate.ActionFallback, nil, `{"messages":[{"role":"system","content":"s"}]}`, ""},
		{"inject without a user message", noUser, gate.ActionInject, nil, "", "bad_field:messages"},
		{"refuse has no upstream body", rewriteBody, gate.ActionRefuse, nil, "", "internal"},
		{"unknown action", rewriteBody, gate.Action("maybe"), nil, "", "internal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.body), defaultDocs, nil)
			if err != nil {
				t.Fatal(err)
			}
			pp := p
			pp.Action = tt.action
			if tt.edit != nil {
				tt.edit(&pp)
			}
			got, err := c.Upstream(nil, &pp)
			if tt.err != "" {
				if s := errString(t, err); s != tt.err || len(got) != 0 {
					t.Fatalf("err = %s, body %q; want %s and no body", s, got, tt.err)
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

// rewriteWith is rewriteBody's upstream body with tail in place of the last
// user message.
func rewriteWith(tail string) string {
	return `{"model":"gpt","messages":[{"role":"system","content":"app"},{"role":"user","content":"old"},
		{"role":"assistant","content":"x"},` + tail + `],"temperature":0,"stream":false}`
}

func TestSystemText(t *testing.T) {
	tests := []struct {
		instr, src, caveat string
		isCaveat           bool
		want               string
	}{
		{"I", "S", "C", false, "I\n\nS"},
		{"I", "S", "C", true, "I\n\nS\n\nC"},
		{"", "S", "C", true, "S\n\nC"},
		{"I", "", "", true, "I"},
		{"", "", "C", true, "C"},
		{"", "", "C", false, ""},
	}
	for _, tt := range tests {
		if got := SystemText(tt.instr, tt.src, tt.caveat, tt.isCaveat); got != tt.want {
			t.Errorf("SystemText(%q, %q, %q, %v) = %q, want %q", tt.instr, tt.src, tt.caveat, tt.isCaveat, got, tt.want)
		}
	}
}
