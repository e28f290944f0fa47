package gate

import (
	"strconv"

	"github.com/ctxgate/ctxgate/gate/internal/encode"
	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/gate/wire"
)

// The output limit (limits.max_decision_bytes): the size a decision would
// have is known before any of it is written (encode.DecisionSize, whose
// comment says why). The sources block is the gate's own writing
// (encode_sources.go), so its size is counted here, by the same walk.

// SourcesSize is the size of the held block's JSON (encode.Held).
func (l *heldSources) SourcesSize(z encode.Sizer) int {
	return sourcesSize(z, l.chunks, l.warning)
}

// escaped is appendEscapedJSON's size for s (a chunk string in the sources
// block), exactly or as an upper bound.
func escaped(z encode.Sizer, s string, oneLine bool) int {
	if z.Exact {
		return escapedJSONLen(s, oneLine)
	}
	return 10 * len(s) // a '<' that starts a fence tag: \u0026lt;
}

// sourcesSize is appendSources' size: the <sources> block as a JSON string.
func sourcesSize(z encode.Sizer, chunks []*Chunk, warning string) int {
	n := len(`"\u003csources\u003e\n`) + len(`\u003c/sources\u003e"`)
	for t, c := range chunks {
		if t > 0 {
			n += len(`\n`)
		}
		n += len("[S]") + intLen(t+1)
		if c.DocID != "" {
			n += len(" (doc: )") + escaped(z, c.DocID, true)
		}
		if c.Title != "" {
			n += 1 + escaped(z, c.Title, true)
		}
		n += len(`\n`)
		if c.Untrusted {
			n += len(`\u003cuntrusted\u003e\n`) + z.Str("", warning) - 2 + len(`\n`) +
				escaped(z, c.Text, false) + len(`\n\u003c/untrusted\u003e\n`)
		} else {
			n += escaped(z, c.Text, false) + len(`\n`)
		}
	}
	return n
}

func intLen(n int) int { return len(strconv.Itoa(n)) }

// jsonEscLen is the length of what jsonx.AppendStringContent writes for an
// ASCII byte, 1 for a byte it copies.
var jsonEscLen = func() (t [128]uint8) {
	for c := range t {
		n := jsonx.StringContentLen(string(rune(c)))
		t[c] = uint8(n)
	}
	return t
}()

// escapedJSONLen is len(appendEscapedJSON(nil, s, oneLine)): the same walk,
// counting.
func escapedJSONLen(s string, oneLine bool) int {
	n := 0
	for i := 0; ; {
		k := jsonx.PlainLen(s[i:], '[')
		n += k
		if i += k; i == len(s) {
			return n
		}
		switch c := s[i]; {
		case c == '<':
			// A run of '<' at once: only the last can start a fence tag
			// (a call per byte was most of a text of '<'s cost).
			j := i + 1
			for j < len(s) && s[j] == '<' {
				j++
			}
			n += (j - i - 1) * len(`\u003c`)
			if formsFenceTag(s[j:]) {
				n += len(`\u0026lt;`)
			} else {
				n += len(`\u003c`)
			}
			i = j
		case c == '[':
			if !formsSourceTag(s[i+1:]) {
				n++
				i++
				break
			}
			j := sourceTagEnd(s, i+1)
			n += 1 + j - (i + 1)
			if j < len(s) && s[j] == ']' {
				n++
				j++
			}
			i = j
		case oneLine && (c == '\n' || c == '\r'):
			n++
			i++
		case c == '\n':
			n += 2
			i++
		case c < 0x80:
			// Another byte the JSON escaper wants (a control byte, '"',
			// '\\', '>', '&'), and those like it after it.
			start := i
			for i < len(s) && s[i] < 0x80 && jsonEscLen[s[i]] > 1 && s[i] != '<' && s[i] != '\n' && (s[i] != '\r' || !oneLine) {
				n += int(jsonEscLen[s[i]])
				i++
			}
			if i == start { // not reached: PlainLen stops only at such bytes
				n += jsonx.StringContentLen(s[i : i+1])
				i++
			}
		default:
			j, k := escapedRun(s, i)
			n += k - i
			if k < j {
				n += jsonx.StringContentLen(s[k:j])
			}
			i = j
		}
	}
}

// maxDecisionBytes is the policy's max_decision_bytes (its default for a
// policy built without it).
func maxDecisionBytes(l *Limits) int {
	if l.MaxDecisionBytes > 0 {
		return l.MaxDecisionBytes
	}
	return DefaultLimits().MaxDecisionBytes
}

// outputLimitError is the error of an output over max_decision_bytes.
func outputLimitError(field, what string, size, limit int) *Error {
	return wire.LimitError(field, "the "+what+" would be "+strconv.Itoa(size)+" bytes of JSON", limit, "max_decision_bytes")
}
