package gate

import (
	"testing"

	"github.com/ctxgate/ctxgate/gate/internal/encode"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// appendEscapedRef is the escaper as it was before it copied runs whole
// (commit 12fd37d): the reference the fast one must match byte for byte.
func appendEscapedRef(b []byte, s string, oneLine bool) []byte {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '<' && formsFenceTag(s[i+1:]):
			b = append(b, "&lt;"...)
		case ch == '[' && formsSourceTag(s[i+1:]):
			b = append(b, '(')
			// Rewrite the matching ']' too, across "S1, S2" lists.
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == ',' || s[j] == 'S' || s[j] == 's' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			b = append(b, s[i+1:j]...)
			if j < len(s) && s[j] == ']' {
				b = append(b, ')')
				j++
			}
			i = j - 1
		case oneLine && (ch == '\n' || ch == '\r'):
			b = append(b, ' ')
		default:
			b = append(b, ch)
		}
	}
	return b
}

var escapeCases = []string{
	"", "plain text", "a longer plain text, past one block", "0123456<sources>", "01234567[S1]", "\"quoted\" & <b>",
	"caf\u00e9 \u4e2d\u6587 [S2] \u2028", "bad\xe2\x80<sources", "tab\tand\x00ctl\n[s 3, S4]\r\n", "</", "[ \n S\n 7 ]", "<sources>", "</ SOURCES >", "< /untrusted>", "<b>bold</b> [1] [S]", "[S1] and [ s2, S3 ]",
	"[S1", "ends with <", "ends with [", "ends with </", "a\nb\r\nc", "<<<[[[", "x[S9]y<untrusted>z",
	"\xff<sources\xfe", "[S1, S2] [s12]", "title\n[S4]\r<sources",
}

func TestAppendEscapedMatchesRef(t *testing.T) {
	for _, s := range escapeCases {
		checkEscapeRef(t, s)
	}
}

// checkEscapeRef checks the prompt escaper against its reference, and the
// one-pass JSON writer against the two passes it replaces (the prompt
// escaper, then the JSON string escaper).
func checkEscapeRef(t *testing.T, s string) {
	t.Helper()
	for _, oneLine := range []bool{false, true} {
		got, want := appendEscaped([]byte("p:"), s, oneLine), appendEscapedRef([]byte("p:"), s, oneLine)
		if string(got) != string(want) {
			t.Fatalf("%q oneLine=%v: %q, reference %q", s, oneLine, got, want)
		}
		got = appendEscapedJSON([]byte("p:"), s, oneLine)
		want = jsonx.AppendStringContent([]byte("p:"), string(appendEscapedRef(nil, s, oneLine)))
		if string(got) != string(want) {
			t.Fatalf("%q oneLine=%v: one pass %q, two passes %q", s, oneLine, got, want)
		}
	}
}

func FuzzAppendEscaped(f *testing.F) {
	for _, s := range escapeCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkEscapeRef(t, s) })
}

// sourcesTwoPass is the decision's sources string as the encoder wrote it
// before the one-pass writer: the block as prompt text (what Decide's copy
// builds), then JSON-escaped.
func sourcesTwoPass(e *Engine, chunks []Chunk) []byte {
	e.work = make([]chunkWork, len(chunks))
	order := make([]int, len(chunks))
	for i := range chunks {
		e.work[i].c, order[i] = &chunks[i], i
	}
	e.constrainedPrompt(order)
	defer e.a.release()
	return jsonx.AppendString(nil, e.a.sources.promptText())
}

func checkSourcesJSON(t *testing.T, e *Engine, chunks []Chunk) {
	t.Helper()
	ptrs := make([]*Chunk, len(chunks))
	for i := range chunks {
		ptrs[i] = &chunks[i]
	}
	got := appendSourcesJSON([]byte("p:"), ptrs, e.policy.Messages.UntrustedWarning)
	if want := sourcesTwoPass(e, chunks); string(got[2:]) != string(want) {
		t.Fatalf("one pass:\n%s\ntwo passes:\n%s", got[2:], want)
	}
	exact := sourcesSize(encode.Sizer{Exact: true}, ptrs, e.policy.Messages.UntrustedWarning)
	if exact != len(got)-2 {
		t.Fatalf("sources size %d, appendSourcesJSON wrote %d: %s", exact, len(got)-2, got[2:])
	}
	if bound := sourcesSize(encode.Sizer{}, ptrs, e.policy.Messages.UntrustedWarning); bound < exact {
		t.Fatalf("sources bound %d under the size %d", bound, exact)
	}
}

func TestSourcesJSONMatchesTwoPass(t *testing.T) {
	e := presetEngine(t, "support-agent")
	checkSourcesJSON(t, e, nil)
	var chunks []Chunk
	for i, s := range escapeCases {
		chunks = append(chunks, Chunk{DocID: escapeCases[(i+1)%len(escapeCases)], Title: escapeCases[(i+2)%len(escapeCases)],
			Text: s, Untrusted: i%3 == 0})
		checkSourcesJSON(t, e, chunks)
	}
}

func FuzzSourcesJSON(f *testing.F) {
	for i, s := range escapeCases {
		f.Add(escapeCases[(i+1)%len(escapeCases)], escapeCases[(i+2)%len(escapeCases)], s, i%2 == 0)
	}
	e := presetEngine(f, "support-agent")
	f.Fuzz(func(t *testing.T, docID, title, text string, untrusted bool) {
		checkSourcesJSON(t, e, []Chunk{{DocID: docID, Title: title, Text: text, Untrusted: untrusted},
			{DocID: title, Title: docID, Text: text + title, Untrusted: !untrusted}})
	})
}

// TestSourcesLater: a decision whose prompt holds its chunks (Evaluate's
// path) encodes to the same bytes as one whose sources were built.
// A prompt the arena holds encodes as the same prompt with its sources
// built as a string, and the arena lets go of the chunks once encoded.
func TestHeldSources(t *testing.T) {
	e := presetEngine(t, "support-agent")
	var chunks []Chunk
	for i, s := range escapeCases {
		chunks = append(chunks, Chunk{ID: s, DocID: escapeCases[(i+3)%len(escapeCases)], Title: s, Text: s, Untrusted: i%2 == 1})
	}
	e.work = make([]chunkWork, len(chunks))
	order := make([]int, len(chunks))
	for i := range chunks {
		e.work[i].c, order[len(chunks)-1-i] = &chunks[i], i
	}
	l := &e.a.sources
	for round := 0; round < 2; round++ {
		p := e.constrainedPrompt(order)
		if p.Sources != "" || len(l.chunks) != len(chunks) {
			t.Fatalf("hold built the sources or lost chunks")
		}
		built := &Decision{Action: ActionInject, Prompt: &Prompt{Instructions: p.Instructions, Sources: l.promptText()}}
		e.a.d = Decision{Action: ActionInject, Prompt: p}
		if n, m := (encode.Sizer{Exact: true}).Decision(&e.a.d, l), len(AppendDecision(nil, built)); n != m {
			t.Fatalf("held decision's size %d, built one writes %d", n, m)
		}
		got, want := e.a.appendJSON([]byte("p:")), AppendDecision([]byte("p:"), built)
		if string(got) != string(want) {
			t.Fatalf("held:\n%s\nbuilt:\n%s", got, want)
		}
		if l.prompt != nil || len(l.chunks) != 0 {
			t.Fatalf("appendJSON kept the request's chunks")
		}
		// Once encoded, the same prompt is an ordinary empty one.
		if again := AppendDecision(nil, &Decision{Action: ActionInject, Prompt: p}); string(again) == string(want[2:]) {
			t.Fatalf("a released prompt still wrote the held sources")
		}
	}
}
