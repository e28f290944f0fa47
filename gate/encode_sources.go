package gate

import (
	"unicode/utf8"
	"unsafe"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// The prompt's <sources> block is escaped twice on its way out: once for the
// prompt (fence and source tags neutralised, appendEscaped) and once as a
// JSON string (jsonx.AppendString). appendSourcesJSON does both in one pass
// over each chunk's text, straight from the chunks, so a decision that is
// only encoded never builds the block as a string at all. Its bytes are
// exactly jsonx.AppendString of the block constrainedPrompt builds
// (TestSourcesJSONMatchesTwoPass, FuzzPrompt).

// appendSourcesJSON appends the <sources> block for chunks (kept chunks in
// tag order, S1 first) as a JSON string, quotes included.
func appendSourcesJSON(dst []byte, chunks []*Chunk, untrustedWarning string) []byte {
	return appendSources(dst, chunks, untrustedWarning, nil)
}

// appendSources is appendSourcesJSON, copying a trusted chunk's text from
// the request when l holds the decode that read it as-is (asIsJSON).
func appendSources(dst []byte, chunks []*Chunk, untrustedWarning string, l *sourcesLater) []byte {
	dst = append(dst, `"\u003csources\u003e\n`...)
	for t, c := range chunks {
		if t > 0 {
			dst = append(dst, `\n`...)
		}
		dst = append(dst, "[S"...)
		dst = appendInt(dst, t+1)
		dst = append(dst, ']')
		if c.DocID != "" {
			dst = append(dst, " (doc: "...)
			dst = appendEscapedJSON(dst, c.DocID, true)
			dst = append(dst, ')')
		}
		if c.Title != "" {
			dst = append(dst, ' ')
			dst = appendEscapedJSON(dst, c.Title, true)
		}
		dst = append(dst, `\n`...)
		if c.Untrusted {
			dst = append(dst, `\u003cuntrusted\u003e\n`...)
			dst = jsonx.AppendStringContent(dst, untrustedWarning)
			dst = append(dst, `\n`...)
			dst = appendEscapedJSON(dst, c.Text, false)
			dst = append(dst, `\n\u003c/untrusted\u003e\n`...)
		} else {
			if raw := l.asIsJSON(c.Text); raw != nil {
				dst = append(dst, raw...)
			} else {
				dst = appendEscapedJSON(dst, c.Text, false)
			}
			dst = append(dst, `\n`...)
		}
	}
	return append(dst, `\u003c/sources\u003e"`...)
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

// sourcesLater lets Evaluate skip building the sources string: while on,
// constrainedPrompt leaves Prompt.Sources empty and records the kept chunks
// here (hold), and Evaluate's encoder writes the block from them
// (appendDecision). Decide's decisions are handed to the caller, so theirs
// is always built.
type sourcesLater struct {
	on      bool
	prompt  *Prompt  // the prompt whose Sources the chunks stand for
	held    Prompt   // what prompt points to (no allocation per decision)
	chunks  []*Chunk // kept chunks in tag order (reused between calls)
	warning string
	size    int // bytes of the chunks' fields, for the size hint
	exact   int // the decision's JSON size when decide measured it, else 0

	// The request's JSON and the engine memory a direct decode read it
	// into, set only by Engine.appendDecided between that decode and this
	// encode (no other code runs between them, so the Request is as
	// decoded), and cleared once the decision is written.
	src []byte
	mem *requestMemory
}

// asIsJSON returns text's JSON as the request holds it when the decoder
// found that it is exactly what appendEscapedJSON(text, false) writes, else
// nil. The text is known by its address and length: only the very string
// the decode made, in the engine's blocks, unchanged until its next decode,
// qualifies; a string built or changed since has another address.
func (l *sourcesLater) asIsJSON(text string) []byte {
	if l == nil || l.mem == nil || len(text) == 0 {
		return nil
	}
	m := l.mem
	t := m.asIsTab
	if len(m.asIs) == 0 || len(t) == 0 {
		return nil
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(text)))
	mask := uint32(len(t) - 1)
	for h := addrHash(p) & mask; ; h = (h + 1) & mask {
		j := int(t[h])
		if j < 0 || j >= len(m.asIs) {
			return nil
		}
		if a := &m.asIs[j]; a.p == p && a.n == len(text) {
			if a.at < 0 || a.at > a.end || a.end > len(l.src) {
				return nil
			}
			return l.src[a.at:a.end]
		}
	}
}

// hold records order's chunks for the encoder and returns the prompt
// without its sources. The chunks are copied out of order: decide reuses
// it to rank the gap event's chunks after building the prompt.
func (l *sourcesLater) hold(e *Engine, order []int, instructions string) *Prompt {
	l.chunks, l.size = l.chunks[:0], 0
	for _, i := range order {
		c := e.work[i].c
		l.chunks = append(l.chunks, c)
		l.size += len(c.DocID) + len(c.Title) + len(c.Text) + 32
	}
	l.warning = e.policy.Messages.UntrustedWarning
	l.held = Prompt{Instructions: instructions}
	l.prompt = &l.held
	return l.prompt
}

func (l *sourcesLater) stands(p *Prompt) bool {
	return l != nil && l.prompt != nil && l.prompt == p
}

func (l *sourcesLater) sizeHint(p *Prompt) int {
	if !l.stands(p) {
		return 0
	}
	return l.size + l.size/32
}

// hint is the first allocation for the decision d: its exact size when
// decide measured it, else decisionSizeHint and the sources' share.
func (l *sourcesLater) hint(d *Decision) int {
	if l != nil && l.exact > 0 {
		return l.exact
	}
	return decisionSizeHint(d) + l.sizeHint(d.Prompt)
}

// appendDecision encodes the decision whose prompt l holds, then drops the
// chunk pointers so the engine does not keep the request alive.
func (l *sourcesLater) appendDecision(dst []byte, d *Decision) []byte {
	dst = appendDecision(dst, d, l)
	clear(l.chunks)
	l.chunks, l.prompt = l.chunks[:0], nil
	l.src, l.mem, l.exact = nil, nil, 0
	return dst
}
