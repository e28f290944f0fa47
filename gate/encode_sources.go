package gate

import (
	"unicode/utf8"

	"github.com/ctxgate/ctxgate/gate/internal/decode"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// The prompt's <sources> block is escaped twice on its way out: once for the
// prompt (fence and source tags neutralised, appendEscaped) and once as a
// JSON string (jsonx.AppendString). The block's layout is written once,
// appendSources, in one of two forms: as prompt text (promptForm, Decide's
// Prompt.Sources) or straight as the JSON string of that text (jsonForm,
// Evaluate's encoder), which escapes both ways in one pass over each
// chunk's text, so a decision that is only encoded never builds the block
// as a string at all. The JSON form's bytes are exactly jsonx.AppendString
// of the prompt form's (TestSourcesJSONMatchesTwoPass, FuzzPrompt).

// sourcesForm is how the block is spelled: its fixed parts, and whether
// text is escaped for the prompt only or for the prompt and as JSON.
type sourcesForm struct {
	open, close, lineBreak        string
	untrustedOpen, untrustedClose string
	json                          bool
}

var (
	promptForm = sourcesForm{open: "<sources>\n", close: "</sources>", lineBreak: "\n",
		untrustedOpen: "<untrusted>\n", untrustedClose: "\n</untrusted>\n"}
	jsonForm = sourcesForm{open: `"\u003csources\u003e\n`, close: `\u003c/sources\u003e"`, lineBreak: `\n`,
		untrustedOpen: `\u003cuntrusted\u003e\n`, untrustedClose: `\n\u003c/untrusted\u003e\n`, json: true}
)

// appendSourcesJSON appends the <sources> block for chunks (kept chunks in
// tag order, S1 first) as a JSON string, quotes included.
func appendSourcesJSON(dst []byte, chunks []*Chunk, untrustedWarning string) []byte {
	return appendSources(dst, chunks, untrustedWarning, &jsonForm, nil)
}

// appendSources appends the <sources> block for chunks in form f. In the
// JSON form a trusted chunk's text is copied from the request when l holds
// the decode that read it as-is (asIsJSON).
func appendSources(dst []byte, chunks []*Chunk, untrustedWarning string, f *sourcesForm, l *heldSources) []byte {
	dst = append(dst, f.open...)
	for t, c := range chunks {
		if t > 0 {
			dst = append(dst, f.lineBreak...)
		}
		dst = append(dst, "[S"...)
		dst = appendInt(dst, t+1)
		dst = append(dst, ']')
		if c.DocID != "" {
			dst = append(dst, " (doc: "...)
			dst = f.escape(dst, c.DocID, true)
			dst = append(dst, ')')
		}
		if c.Title != "" {
			dst = append(dst, ' ')
			dst = f.escape(dst, c.Title, true)
		}
		dst = append(dst, f.lineBreak...)
		if c.Untrusted {
			dst = append(dst, f.untrustedOpen...)
			if f.json {
				dst = jsonx.AppendStringContent(dst, untrustedWarning)
			} else {
				dst = append(dst, untrustedWarning...)
			}
			dst = append(dst, f.lineBreak...)
			dst = f.escape(dst, c.Text, false)
			dst = append(dst, f.untrustedClose...)
			continue
		}
		if raw := l.asIsJSON(c.Text); raw != nil && f.json {
			dst = append(dst, raw...)
		} else {
			dst = f.escape(dst, c.Text, false)
		}
		dst = append(dst, f.lineBreak...)
	}
	return append(dst, f.close...)
}

// escape appends s with fence and source tags neutralised (and line breaks
// as spaces, with oneLine), as JSON string content in the JSON form.
func (f *sourcesForm) escape(dst []byte, s string, oneLine bool) []byte {
	if f.json {
		return appendEscapedJSON(dst, s, oneLine)
	}
	return appendEscaped(dst, s, oneLine)
}

// appendEscapedJSON appends what jsonx.AppendStringContent writes for
// appendEscaped(s, oneLine), in one pass over s: runs that neither escape
// touches are found eight bytes at a time (jsonx.PlainLen, which also stops
// at '['); a '<' or '[' is decided by the prompt's rules and written in its
// JSON form; anything else goes to the JSON escaper. Splitting the JSON
// escaping at these bytes changes nothing: every byte either escaper stops
// at is ASCII, so never inside a multi-byte rune.
func appendEscapedJSON(dst []byte, s string, oneLine bool) []byte {
	for i := 0; ; {
		n := jsonx.PlainLen(s[i:], '[')
		dst = append(dst, s[i:i+n]...)
		if i += n; i == len(s) {
			return dst
		}
		switch c := s[i]; {
		case c == '<':
			if formsFenceTag(s[i+1:]) {
				dst = append(dst, `\u0026lt;`...) // "&lt;" as JSON
			} else {
				dst = append(dst, `\u003c`...)
			}
			i++
		case c == '[':
			if !formsSourceTag(s[i+1:]) {
				dst = append(dst, '[')
				i++
				break
			}
			// The tag's body is spaces, commas, S and digits: plain JSON.
			j := sourceTagEnd(s, i+1)
			dst = append(dst, '(')
			dst = append(dst, s[i+1:j]...)
			if j < len(s) && s[j] == ']' {
				dst = append(dst, ')')
				j++
			}
			i = j
		case oneLine && (c == '\n' || c == '\r'):
			dst = append(dst, ' ')
			i++
		case c == '\n':
			// A text's line breaks are most of its stops: written here,
			// not through the JSON escaper's calls.
			dst = append(dst, '\\', 'n')
			i++
		default:
			// A byte the JSON escaper wants; a non-ASCII run goes whole
			// (it ends at an ASCII byte, so at a rune boundary), its valid
			// runes other than U+2028 and U+2029 copied as they are.
			j, k := escapedRun(s, i)
			dst = append(dst, s[i:k]...)
			if k < j {
				dst = jsonx.AppendStringContent(dst, s[k:j])
			}
			i = j
		}
	}
}

// escapedRun is where appendEscapedJSON's default case, at s[i], ends (j)
// and how far it copies bytes as they are (k): a non-ASCII run goes whole,
// its valid runes other than U+2028 and U+2029 copied; any other byte is
// the JSON escaper's (k == i, j == i+1).
func escapedRun(s string, i int) (j, k int) {
	j, k = i+1, i
	if s[i] < 0x80 {
		return j, k
	}
	for j < len(s) && s[j] >= 0x80 {
		j++
	}
	for k < j {
		r, size := utf8.DecodeRuneInString(s[k:j])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			break
		}
		k += size
	}
	return j, k
}

// heldSources is a prompt whose sources block is not built as a string
// while the decision is made: the arena holds the kept chunks (hold), and
// the encoder writes the block from them straight into the decision JSON
// (appendDecision), or Decide's copy builds it (promptText).
type heldSources struct {
	prompt  *Prompt  // the prompt whose Sources the chunks stand for
	chunks  []*Chunk // kept chunks in tag order (reused between calls)
	warning string
	size    int    // bytes of the chunks' fields, for the size hint
	buf     []byte // promptText's scratch

	// The request's JSON and the engine memory a direct decode read it
	// into, set only by Engine.appendDecided between that decode and this
	// encode (no other code runs between them, so the Request is as
	// decoded), and cleared once the decision is written.
	src []byte
	mem *decode.Memory
}

// asIsJSON returns text's JSON as the request holds it when the decoder
// found that it is exactly what appendEscapedJSON(text, false) writes
// (decode.Memory.AsIs), else nil.
func (l *heldSources) asIsJSON(text string) []byte {
	if l == nil || l.mem == nil {
		return nil
	}
	return l.mem.AsIs(text, l.src)
}

// hold records order's chunks as the sources of p (the arena's prompt).
// The chunks are copied out of order: decide reuses it to rank the gap
// event's chunks after building the prompt.
func (l *heldSources) hold(e *Engine, order []int, p *Prompt) *Prompt {
	l.chunks, l.size = l.chunks[:0], 0
	for _, i := range order {
		c := e.work[i].c
		l.chunks = append(l.chunks, c)
		l.size += len(c.DocID) + len(c.Title) + len(c.Text) + 32
	}
	l.warning = e.policy.Messages.UntrustedWarning
	l.prompt = p
	return p
}

func (l *heldSources) stands(p *Prompt) bool {
	return l != nil && l.prompt != nil && l.prompt == p
}

// Holds, SizeHint and AppendSourcesJSON let the encoder write the held
// prompt's sources block (encode.Held).
func (l *heldSources) Holds(p *Prompt) bool { return l.stands(p) }
func (l *heldSources) SizeHint() int        { return l.size + l.size/32 }
func (l *heldSources) AppendSourcesJSON(dst []byte) []byte {
	return appendSources(dst, l.chunks, l.warning, &jsonForm, l)
}

// promptText is the sources block as prompt text.
func (l *heldSources) promptText() string { return string(l.promptBytes()) }

// promptBytes is promptText in l's buffer, reused by the next call.
func (l *heldSources) promptBytes() []byte {
	l.buf = appendSources(l.buf[:0], l.chunks, l.warning, &promptForm, nil)
	return l.buf
}

// release drops the chunk pointers and the request's bytes.
func (l *heldSources) release() {
	clear(l.chunks)
	l.chunks, l.prompt = l.chunks[:0], nil
	l.src, l.mem = nil, nil
}
