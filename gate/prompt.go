package gate

import (
	"math/bits"
	"strings"

	"github.com/ctxgate/ctxgate/gate/internal/swar"
)

// The constrained prompt (the support-agent article): four instructions and a <sources> block
// with one entry per kept chunk in tag order:
//
//	[S1] (doc: <doc_id>) <title>
//	<text>
//
// Chunk text, titles and doc ids are escaped so that retrieved content cannot
// close the block, open a fence or forge a tag: a '<' that would start a
// sources/untrusted tag (any case, any spacing, with or without '/') becomes
// "&lt;", and "[S<digits>" becomes "(S<digits>" with its closing bracket, so a
// chunk can never appear to be another source.

// constrainedPrompt returns the decision's prompt for the kept chunks in
// order: the policy's instructions, and a sources block the arena holds as
// the chunks themselves (written when the decision is encoded or copied).
func (e *Engine) constrainedPrompt(order []int) *Prompt {
	p := e.a.heldPrompt(Prompt{Instructions: e.q.instr.get(e.policy)})
	return e.a.sources.hold(e, order, p)
}

// instructionsCache holds a policy's instruction lines, joined and with
// {refusal_line} filled in: they depend on the policy alone, and rebuilding
// them (a ReplaceAll per line and a string) was a tenth of a decision's time
// in the TinyGo module. Keyed by the *Policy, which an engine never changes
// and whose callers must not modify it (Engine.Policy).
type instructionsCache struct {
	policy *Policy
	text   string
}

func (c *instructionsCache) get(p *Policy) string {
	if c.policy != p {
		c.text, c.policy = joinInstructions(&p.Messages), p
	}
	return c.text
}

func joinInstructions(m *Messages) string {
	var b []byte
	for i, line := range m.Instructions {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, strings.ReplaceAll(line, "{refusal_line}", m.RefusalLine)...)
	}
	return string(b)
}

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

// fenceTags are the tag names the prompt uses; content must not form them.
var fenceTags = [...]string{"sources", "untrusted"}

// appendEscaped appends s with fence tags and source tags neutralised. With
// oneLine, line breaks become spaces (titles and doc ids sit in a header
// line and must not start a new entry). Runs of ordinary bytes are copied
// whole: only '<', '[' and (oneLine) line breaks are looked at, eight bytes
// at a time (promptPlainLen).
func appendEscaped(b []byte, s string, oneLine bool) []byte {
	i := 0
	for {
		j := i + promptPlainLen(s[i:], oneLine)
		b = append(b, s[i:j]...)
		if j == len(s) {
			return b
		}
		i = j
		ch := s[i]
		switch {
		case ch == '<' && formsFenceTag(s[i+1:]):
			b = append(b, "&lt;"...)
		case ch == '[' && formsSourceTag(s[i+1:]):
			b = append(b, '(')
			j := sourceTagEnd(s, i+1)
			b = append(b, s[i+1:j]...)
			if j < len(s) && s[j] == ']' {
				b = append(b, ')')
				j++
			}
			i = j - 1
		case ch == '\n' || ch == '\r': // only reached with oneLine
			b = append(b, ' ')
		default:
			b = append(b, ch)
		}
		i++
	}
}

// sourceTagEnd is where a source tag's body that starts at s[i] ends: the
// rewrite of "[S1, S2]" spans the list up to its ']'.
func sourceTagEnd(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == ',' || s[i] == 'S' || s[i] == 's' || s[i] >= '0' && s[i] <= '9') {
		i++
	}
	return i
}

// promptPlainLen is the length of the longest prefix of s with no '<' or
// '[' (nor, with oneLine, a line break): what appendEscaped copies as it
// is. Eight bytes are tested at a time (hasByte), since chunk text is long
// runs of such bytes.
func promptPlainLen(s string, oneLine bool) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := swar.Load64(s, i)
		m := swar.HasByte(x, '<') | swar.HasByte(x, '[')
		if oneLine {
			m |= swar.HasByte(x, '\n') | swar.HasByte(x, '\r')
		}
		if m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(s) && s[i] != '<' && s[i] != '[' && (!oneLine || s[i] != '\n' && s[i] != '\r') {
		i++
	}
	return i
}

func skipSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r' || s[0] == '\f' || s[0] == '\v') {
		s = s[1:]
	}
	return s
}

// formsFenceTag reports whether rest (what follows a '<') spells an optional
// '/' and a fence tag name, ignoring case and whitespace, or ends before a
// name could start.
func formsFenceTag(rest string) bool {
	rest = skipSpace(rest)
	if len(rest) > 0 && rest[0] == '/' {
		rest = skipSpace(rest[1:])
	}
	// At the end of a field the next field may complete the tag: a title
	// ending in "</" is followed by a line break and the chunk's text, which
	// may start with "sources>".
	if rest == "" {
		return true
	}
	for _, tag := range fenceTags {
		if len(rest) >= len(tag) && strings.EqualFold(rest[:len(tag)], tag) {
			return true
		}
	}
	return false
}

// formsSourceTag reports whether rest (what follows a '[') starts with
// optional white space, 'S' or 's', optional white space and a digit, or
// ends before the tag could be complete (see formsFenceTag): a title ending
// in "[" or "[S" is followed by a line break and the chunk's text, which may
// start with "S9]" or "9]". White space includes line breaks, because a
// reader (or a model) may take "[S\n9]" for a tag too.
func formsSourceTag(rest string) bool {
	rest = skipSpace(rest)
	if rest == "" {
		return true
	}
	if rest[0] != 'S' && rest[0] != 's' {
		return false
	}
	rest = skipSpace(rest[1:])
	return rest == "" || rest[0] >= '0' && rest[0] <= '9'
}

// fill substitutes {question} and {missing} (the first two missing aspects
// joined by ", ", as the sufficient-context gateway does) in a message template.
func fill(tmpl, question string, missing []string) string {
	if strings.Contains(tmpl, "{missing}") {
		n := len(missing)
		if n > 2 {
			n = 2
		}
		tmpl = strings.ReplaceAll(tmpl, "{missing}", strings.Join(missing[:n], ", "))
	}
	if strings.Contains(tmpl, "{question}") {
		tmpl = strings.ReplaceAll(tmpl, "{question}", question)
	}
	return tmpl
}
