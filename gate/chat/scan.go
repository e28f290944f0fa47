package chat

import (
	"strconv"
	"unicode/utf8"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// Bodies are rewritten by splicing: Parse finds the byte spans of the few
// members the mapping touches (messages, documents, ctxgate) and every other
// byte is copied as the client sent it. jsonx validates the body first (strictly:
// duplicate keys, UTF-8, depth), so this scanner only has to find where values
// start and end in a document already known to be valid JSON; re-serializing
// a jsonx tree instead would re-escape every string of the conversation.

// span is a half-open byte range [Start, End) of one JSON value in a body.
type span struct{ Start, End int }

func (s span) ok() bool { return s.End > s.Start }

// maxScanDepth bounds nesting so a hostile body cannot exhaust the stack.
const maxScanDepth = 128

type scanError struct {
	Off int
	Msg string
}

func (e *scanError) Error() string { return e.Msg + " at byte " + strconv.Itoa(e.Off) }

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the end of the JSON value that starts at or after i
// (leading whitespace skipped) and the offset where the value starts.
func skipValue(b []byte, i, depth int) (start, end int, err *scanError) {
	i = skipSpace(b, i)
	if i >= len(b) {
		return i, i, &scanError{i, "unexpected end of JSON"}
	}
	if depth > maxScanDepth {
		return i, i, &scanError{i, "JSON nested too deeply"}
	}
	start = i
	switch c := b[i]; {
	case c == '"':
		end, err = skipString(b, i)
	case c == '{' || c == '[':
		end, err = skipContainer(b, i)
	case c == 't':
		end, err = skipLiteral(b, i, "true")
	case c == 'f':
		end, err = skipLiteral(b, i, "false")
	case c == 'n':
		end, err = skipLiteral(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		end, err = skipNumber(b, i)
	default:
		err = &scanError{i, "invalid character " + strconv.QuoteRune(rune(c))}
	}
	return start, end, err
}

// skipContainer returns the end of the object or array at b[i] by bracket
// counting, without checking its structure: the body was validated by jsonx
// before any scan, and a skipped value is only copied, never interpreted.
// Walking it member by member instead made every scan cost a parse.
func skipContainer(b []byte, i int) (int, *scanError) {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			k, err := skipString(b, j)
			if err != nil {
				return k, err
			}
			j = k - 1
		case '{', '[':
			if depth++; depth > maxScanDepth {
				return j, &scanError{j, "JSON nested too deeply"}
			}
		case '}', ']':
			if depth--; depth == 0 {
				return j + 1, nil
			}
		}
	}
	return len(b), &scanError{i, "unexpected end of JSON"}
}

func skipLiteral(b []byte, i int, lit string) (int, *scanError) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, &scanError{i, "invalid literal"}
	}
	return i + len(lit), nil
}

func skipNumber(b []byte, i int) (int, *scanError) {
	start := i
	if b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if digits() == 0 {
		return i, &scanError{start, "invalid number"}
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return i, &scanError{start, "invalid number"}
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return i, &scanError{start, "invalid number"}
		}
	}
	return i, nil
}

func skipString(b []byte, i int) (int, *scanError) {
	start := i
	i++
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			if i+1 >= len(b) {
				return i, &scanError{start, "unterminated string"}
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
					return i, &scanError{i, "invalid \\u escape"}
				}
				i += 6
			default:
				return i, &scanError{i, "invalid escape"}
			}
		case c < 0x20:
			return i, &scanError{i, "control character in string"}
		default:
			i++
		}
	}
	return i, &scanError{start, "unterminated string"}
}

func isHex4(h []byte) bool {
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// eachMember walks the object starting at b[i] == '{' and calls fn with each
// member's raw key (between the quotes, escapes not decoded) and value span.
// fn may be nil to only skip the object.
func eachMember(b []byte, i, depth int, fn func(key []byte, member, value span)) (int, *scanError) {
	if i >= len(b) || b[i] != '{' {
		return i, &scanError{i, "expected an object"}
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return i, &scanError{i, "expected a member name"}
		}
		kStart := i
		kEnd, err := skipString(b, i)
		if err != nil {
			return kEnd, err
		}
		i = skipSpace(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return i, &scanError{i, "expected ':'"}
		}
		vStart, vEnd, err := skipValue(b, i+1, depth+1)
		if err != nil {
			return vEnd, err
		}
		if fn != nil {
			fn(b[kStart+1:kEnd-1], span{kStart, vEnd}, span{vStart, vEnd})
		}
		i = skipSpace(b, vEnd)
		if i >= len(b) {
			return i, &scanError{i, "unexpected end of JSON"}
		}
		if b[i] == '}' {
			return i + 1, nil
		}
		if b[i] != ',' {
			return i, &scanError{i, "expected ',' or '}'"}
		}
		i++
	}
}

// EachMember calls fn with each member of the JSON object b: its raw name
// (between the quotes, escapes not decoded) and its raw value. It is the
// scanner Parse uses, for hosts that read a few top-level members of a body
// already known to be valid JSON (a request the gate accepted, a decision the
// gate wrote) without parsing the rest. It reports false when b is not an
// object it can walk; then what fn saw should not be trusted.
func EachMember(b []byte, fn func(name, value []byte)) bool {
	_, err := eachMember(b, skipSpace(b, 0), 0, func(k []byte, _, v span) { fn(k, b[v.Start:v.End]) })
	return err == nil
}

// eachElement walks the array starting at b[i] == '[' and calls fn with each
// element's span. fn may be nil.
func eachElement(b []byte, i, depth int, fn func(value span)) (int, *scanError) {
	if i >= len(b) || b[i] != '[' {
		return i, &scanError{i, "expected an array"}
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		vStart, vEnd, err := skipValue(b, i, depth+1)
		if err != nil {
			return vEnd, err
		}
		if fn != nil {
			fn(span{vStart, vEnd})
		}
		i = skipSpace(b, vEnd)
		if i >= len(b) {
			return i, &scanError{i, "unexpected end of JSON"}
		}
		if b[i] == ']' {
			return i + 1, nil
		}
		if b[i] != ',' {
			return i, &scanError{i, "expected ',' or ']'"}
		}
		i++
	}
}

// member returns the span of obj's member named key, if obj is an object
// that has one. The last occurrence wins, as in most JSON decoders.
func member(b []byte, obj span, key string) (value span, whole span, found bool) {
	if !obj.ok() || b[obj.Start] != '{' {
		return span{}, span{}, false
	}
	eachMember(b, obj.Start, 0, func(k []byte, m, v span) {
		if keyIs(k, key) {
			value, whole, found = v, m, true
		}
	})
	return value, whole, found
}

// path follows a sequence of member names from obj.
func path(b []byte, obj span, keys []string) (span, bool) {
	cur := obj
	for _, k := range keys {
		v, _, ok := member(b, cur, k)
		if !ok {
			return span{}, false
		}
		cur = v
	}
	return cur, true
}

// keyIs compares a raw member name (escapes not decoded) with key. A name
// with escapes ("docum\u0065nts") is decoded as it is compared, so the
// scanner and jsonx always agree on which member is which, and nothing is
// allocated: a body of many escaped names used to cost a parse of each, for
// each member the mapping looks for. raw is part of a body jsonx accepted,
// so its escapes are well formed.
func keyIs(raw []byte, key string) bool {
	k := 0
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			if k >= len(key) || key[k] != c {
				return false
			}
			i, k = i+1, k+1
			continue
		}
		if i+1 >= len(raw) {
			return false
		}
		var r rune
		switch e := raw[i+1]; e {
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			var ok bool
			if r, ok = jsonx.Hex4(raw, i+2); !ok {
				return false
			}
			if r >= 0xD800 && r <= 0xDBFF {
				lo, ok := jsonx.Hex4(raw, i+8)
				if !ok || raw[i+6] != '\\' || raw[i+7] != 'u' {
					return false
				}
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				i += 6
			}
			i += 4
		default:
			r = rune(e) // '"', '\\', '/'
		}
		i += 2
		var buf [utf8.UTFMax]byte
		n := utf8.EncodeRune(buf[:], r)
		if len(key)-k < n {
			return false
		}
		for j := 0; j < n; j++ {
			if key[k+j] != buf[j] {
				return false
			}
		}
		k += n
	}
	return k == len(key)
}

// strIs reports whether the value v of b is the JSON string s, escapes
// decoded ("us\u0065r" is "user"), like keyIs for member names.
func strIs(b []byte, v span, s string) bool {
	if !v.ok() || v.End-v.Start < 2 || b[v.Start] != '"' {
		return false
	}
	return keyIs(b[v.Start+1:v.End-1], s)
}
