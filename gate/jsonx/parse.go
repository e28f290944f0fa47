package jsonx

import (
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// Error is a parse error. Offset is the byte offset in the input where the
// problem was found; Msg says what was expected. TooDeep and TooMany mark
// the nesting and value-count limits, which callers report as input limits
// rather than syntax errors.
type Error struct {
	Offset  int
	Msg     string
	TooDeep bool
	TooMany bool
}

// Limits bound one parse; a zero field means no limit.
type Limits struct {
	MaxDepth int // nesting depth of arrays and objects
	// MaxValues bounds the number of values, counting the top-level value
	// and object keys. A parsed value costs 40-56 bytes, so a hostile 4 MB
	// document of "0,0,..." would otherwise become a tree of over 100 MB.
	MaxValues int
}

func (e *Error) Error() string { return "offset " + strconv.Itoa(e.Offset) + ": " + e.Msg }

// Parse parses exactly one JSON value (RFC 8259) from data. It is strict:
//   - strings must be valid UTF-8 without raw control characters;
//   - an escaped lone surrogate (\uD800 with no low half) is an error, not
//     replaced by U+FFFD: it cannot be represented in UTF-8, and replacing it
//     would silently change text the caller may compare or sign;
//   - duplicate object keys are an error: parsers disagree on which one wins,
//     so a document with duplicates means different things to different
//     readers (a classic request-smuggling and signature-bypass vector);
//   - a number that overflows float64 (1e400) is an error; one that underflows
//     (1e-400) becomes 0, which is the nearest float64 and loses nothing a
//     score could need;
//   - anything but whitespace after the value is an error;
//   - nesting deeper than maxDepth containers is an error with TooDeep set.
//     maxDepth <= 0 means no limit; the parser is iterative, so depth costs
//     heap, never the (small, fixed) Wasm stack.
//
// data is copied once into a buffer the parser owns; strings are unescaped
// in place in that copy and returned as views of it, so a parse allocates the
// copy and the value slabs, not one string per escaped value. The returned
// Value never aliases data: the caller may reuse its buffer.
func Parse(data []byte, maxDepth int) (Value, error) {
	return ParseWith(data, Limits{MaxDepth: maxDepth})
}

// ParseWith is Parse with every limit.
func ParseWith(data []byte, lim Limits) (Value, error) {
	return parseOwned(append([]byte(nil), data...), lim)
}

// ParseInPlace is Parse without the copy, for a caller that owns data and
// is done with it (a Wasm guest's input buffer): escaped strings are
// unescaped in place, so data is modified, and the returned Value aliases it.
// The caller must not use or modify data afterwards.
func ParseInPlace(data []byte, maxDepth int) (Value, error) {
	return parseOwned(data, Limits{MaxDepth: maxDepth})
}

// ParseInPlaceWith is ParseInPlace with every limit.
func ParseInPlaceWith(data []byte, lim Limits) (Value, error) {
	return parseOwned(data, lim)
}

func parseOwned(data []byte, lim Limits) (Value, error) {
	p := parser{src: data, maxDepth: lim.MaxDepth, maxValues: lim.MaxValues, values: 1, stack: make([]Value, 0, 64)} // values: the top-level one
	v, err := p.parse()
	if err != nil {
		return Value{}, err
	}
	return v, nil
}

// ParseString is Parse over a string.
func ParseString(src string, maxDepth int) (Value, error) {
	return Parse([]byte(src), maxDepth)
}

type frame struct {
	kind  Kind
	start int // index in parser.stack of the container's first item
	open  int // byte offset of the opening bracket, for error messages
}

type parser struct {
	src       []byte // owned: escaped strings are rewritten in place
	pos       int
	maxDepth  int
	maxValues int
	values    int
	stack     []Value // items of the containers still open
	frames    []frame
	slab      []Value // finished containers' items are carved from here
}

func (p *parser) fail(msg string) *Error { return &Error{Offset: p.pos, Msg: msg} }

func (p *parser) skipWS() {
	i, s := p.pos, p.src
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	p.pos = i
}

// found describes the byte at the current position for an error message.
func (p *parser) found() string {
	if p.pos >= len(p.src) {
		return "end of input"
	}
	c := p.src[p.pos]
	if c >= 0x20 && c < 0x7f {
		return "'" + string(rune(c)) + "'"
	}
	const hex = "0123456789abcdef"
	return "byte 0x" + string([]byte{hex[c>>4], hex[c&15]})
}

func (p *parser) parse() (Value, *Error) {
	p.skipWS()
	for {
		// Expecting a value.
		if p.pos >= len(p.src) {
			return Value{}, p.fail("expected a value, found end of input")
		}
		var v Value
		switch c := p.src[p.pos]; {
		case c == '{' || c == '[':
			if p.maxDepth > 0 && len(p.frames) >= p.maxDepth {
				return Value{}, &Error{Offset: p.pos, Msg: "nesting deeper than " + strconv.Itoa(p.maxDepth) + " levels", TooDeep: true}
			}
			k := Array
			closer := byte(']')
			if c == '{' {
				k, closer = Object, '}'
			}
			p.frames = append(p.frames, frame{kind: k, start: len(p.stack), open: p.pos})
			p.pos++
			p.skipWS()
			if p.pos < len(p.src) && p.src[p.pos] == closer {
				p.pos++
				v = p.close()
				break
			}
			if k == Object {
				if err := p.key(); err != nil {
					return Value{}, err
				}
			}
			continue
		case c == '"':
			s, err := p.str()
			if err != nil {
				return Value{}, err
			}
			v = Value{kind: String, str: s}
		case c == '-' || (c >= '0' && c <= '9'):
			n, err := p.number()
			if err != nil {
				return Value{}, err
			}
			v = n
		case c == 't':
			if err := p.literal("true"); err != nil {
				return Value{}, err
			}
			v = Value{kind: Bool, b: true}
		case c == 'f':
			if err := p.literal("false"); err != nil {
				return Value{}, err
			}
			v = Value{kind: Bool}
		case c == 'n':
			if err := p.literal("null"); err != nil {
				return Value{}, err
			}
		default:
			return Value{}, p.fail("expected a value, found " + p.found())
		}

		// A value is complete: attach it and close every container it ends.
		for {
			if len(p.frames) == 0 {
				p.skipWS()
				if p.pos != len(p.src) {
					return Value{}, p.fail("expected end of input after the JSON value, found " + p.found())
				}
				return v, nil
			}
			if err := p.push(v); err != nil {
				return Value{}, err
			}
			f := p.frames[len(p.frames)-1]
			p.skipWS()
			if p.pos >= len(p.src) {
				return Value{}, p.fail("expected ',' or a closing bracket, found end of input")
			}
			c := p.src[p.pos]
			if c == ',' {
				p.pos++
				p.skipWS()
				if f.kind == Object {
					if err := p.key(); err != nil {
						return Value{}, err
					}
				}
				break
			}
			if (f.kind == Object && c == '}') || (f.kind == Array && c == ']') {
				p.pos++
				if f.kind == Object {
					if err := p.checkDuplicates(f); err != nil {
						return Value{}, err
					}
				}
				v = p.close()
				continue
			}
			if f.kind == Object {
				return Value{}, p.fail("expected ',' or '}' in object, found " + p.found())
			}
			return Value{}, p.fail("expected ',' or ']' in array, found " + p.found())
		}
	}
}

// key reads `"name" :` inside an object and pushes the name.
func (p *parser) key() *Error {
	if p.pos >= len(p.src) || p.src[p.pos] != '"' {
		return p.fail("expected a string key in object, found " + p.found())
	}
	s, err := p.str()
	if err != nil {
		return err
	}
	p.skipWS()
	if p.pos >= len(p.src) || p.src[p.pos] != ':' {
		return p.fail("expected ':' after object key, found " + p.found())
	}
	p.pos++
	p.skipWS()
	return p.push(Value{kind: String, str: s})
}

// push appends a finished value to the open container's items, counting it
// against MaxValues. The scratch grows by doubling: append's 1.25x growth
// for large slices would allocate about five times the final size for one
// huge array.
func (p *parser) push(v Value) *Error {
	p.values++
	if p.maxValues > 0 && p.values > p.maxValues {
		return &Error{Offset: p.pos, Msg: "more than " + strconv.Itoa(p.maxValues) + " values", TooMany: true}
	}
	if len(p.stack) == cap(p.stack) {
		grown := make([]Value, len(p.stack), 2*cap(p.stack)+16)
		copy(grown, p.stack)
		p.stack = grown
	}
	p.stack = append(p.stack, v)
	return nil
}

// close pops the innermost container and returns it as a value whose items
// are carved from the shared slab.
func (p *parser) close() Value {
	f := p.frames[len(p.frames)-1]
	p.frames = p.frames[:len(p.frames)-1]
	n := len(p.stack) - f.start
	var items []Value
	if n > 0 {
		items = p.alloc(n)
		copy(items, p.stack[f.start:])
		// Clear the scratch so it does not pin strings of finished values.
		clear(p.stack[f.start:])
		p.stack = p.stack[:f.start]
	}
	return Value{kind: f.kind, items: items}
}

// slabMax bounds one slab so a huge document does not double into a huge
// mostly empty allocation.
const slabMax = 8192

func (p *parser) alloc(n int) []Value {
	if cap(p.slab)-len(p.slab) < n {
		size := 2 * cap(p.slab)
		if size == 0 {
			// First slab: typical API JSON (keys, short values, some prose)
			// averages over 40 bytes per value, so this usually holds the
			// whole document in one allocation without much waste.
			size = len(p.src) / 40
		}
		if size < 64 {
			size = 64
		}
		if size > slabMax {
			size = slabMax
		}
		if size < n {
			size = n
		}
		p.slab = make([]Value, 0, size)
	}
	l := len(p.slab)
	p.slab = p.slab[:l+n]
	return p.slab[l : l+n : l+n]
}

// checkDuplicates rejects an object with a repeated key. Small objects are
// checked pairwise; large ones with a map so hostile input stays linear.
func (p *parser) checkDuplicates(f frame) *Error {
	items := p.stack[f.start:]
	n := len(items) / 2
	dup := -1
	if n <= 16 {
	outer:
		for i := 1; i < n; i++ {
			for j := 0; j < i; j++ {
				if items[2*i].str == items[2*j].str {
					dup = i
					break outer
				}
			}
		}
	} else {
		seen := make(map[string]struct{}, n)
		for i := 0; i < n; i++ {
			k := items[2*i].str
			if _, ok := seen[k]; ok {
				dup = i
				break
			}
			seen[k] = struct{}{}
		}
	}
	if dup < 0 {
		return nil
	}
	k := items[2*dup].str
	if len(k) > 64 {
		k = k[:64] + "..."
	}
	// The offset points at the object's opening brace: the parser does not
	// keep per-key offsets, and the key is named in the message.
	return &Error{Offset: f.open, Msg: "duplicate key \"" + k + "\" in object (ambiguous: parsers disagree on which value wins)"}
}

func (p *parser) literal(word string) *Error {
	if len(p.src)-p.pos >= len(word) && string(p.src[p.pos:p.pos+len(word)]) == word {
		p.pos += len(word)
		return nil
	}
	return p.fail("expected a value (invalid literal), found " + p.found())
}

func (p *parser) number() (Value, *Error) {
	start := p.pos
	s := p.src
	if p.pos < len(s) && s[p.pos] == '-' {
		p.pos++
	}
	if p.pos >= len(s) || s[p.pos] < '0' || s[p.pos] > '9' {
		return Value{}, p.fail("expected a digit in number, found " + p.found())
	}
	if s[p.pos] == '0' {
		p.pos++
		if p.pos < len(s) && s[p.pos] >= '0' && s[p.pos] <= '9' {
			return Value{}, p.fail("leading zero in number")
		}
	} else {
		p.digits()
	}
	if p.pos < len(s) && s[p.pos] == '.' {
		p.pos++
		if p.pos >= len(s) || s[p.pos] < '0' || s[p.pos] > '9' {
			return Value{}, p.fail("expected a digit after '.' in number, found " + p.found())
		}
		p.digits()
	}
	if p.pos < len(s) && (s[p.pos] == 'e' || s[p.pos] == 'E') {
		p.pos++
		if p.pos < len(s) && (s[p.pos] == '+' || s[p.pos] == '-') {
			p.pos++
		}
		if p.pos >= len(s) || s[p.pos] < '0' || s[p.pos] > '9' {
			return Value{}, p.fail("expected a digit in exponent, found " + p.found())
		}
		p.digits()
	}
	raw := view(s[start:p.pos])
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		// The grammar was checked above, so the only failure left is range.
		// Underflow returns a (sub)normal or zero with an error in some Go
		// versions: keep the value. Overflow returns ±Inf: reject.
		if f > 1.7976931348623157e308 || f < -1.7976931348623157e308 || f != f {
			return Value{}, &Error{Offset: start, Msg: "number " + clip(raw) + " overflows float64"}
		}
	}
	return Value{kind: Number, num: f, str: raw}, nil
}

func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}

func (p *parser) digits() {
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
}

// str reads a string starting at the opening quote. Strings without escapes
// are returned as substrings of the source (no allocation).
func (p *parser) str() (string, *Error) {
	s := p.src
	start := p.pos + 1 // after the opening quote
	i := start
	// Hot loop: plain ASCII string bytes, with the index in a local so it
	// stays in a register (it matters most under TinyGo).
	for i < len(s) && plain[s[i]] {
		i++
	}
	for i < len(s) {
		c := s[i]
		switch {
		case plain[c]:
			i++
		case c == '"':
			p.pos = i + 1
			return view(s[start:i]), nil
		case c == '\\':
			p.pos = i
			return p.strEscaped(start)
		case c < 0x20:
			p.pos = i
			return "", p.fail("control character in string (must be escaped)")
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size <= 1 {
				p.pos = i
				return "", p.fail("invalid UTF-8 in string")
			}
			i += size
		}
	}
	p.pos = i
	return "", p.fail("unterminated string")
}

// plain marks the bytes a string can hold as they are: ASCII except control
// characters, '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// view returns b as a string without copying. Safe because b is part of the
// parser's own buffer, and after a string is handed out its bytes are never
// written again (in-place unescaping only writes behind the read position,
// inside the string being unescaped).
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// strEscaped continues a string that contains escapes, unescaping it in
// place: w (the write position) never passes p.pos (the read position),
// because every escape is at least as long as what it stands for. start is
// the offset of the first content byte.
func (p *parser) strEscaped(start int) (string, *Error) {
	s := p.src
	w := p.pos
	for p.pos < len(s) {
		// Move a run of plain bytes at once.
		if i := p.pos; plain[s[i]] {
			for i < len(s) && plain[s[i]] {
				i++
			}
			w += copy(s[w:], s[p.pos:i])
			p.pos = i
			continue
		}
		c := s[p.pos]
		switch {
		case c == '"':
			p.pos++
			return view(s[start:w]), nil
		case c == '\\':
			if p.pos+1 >= len(s) {
				p.pos++
				return "", p.fail("unterminated escape in string")
			}
			e := s[p.pos+1]
			p.pos += 2
			switch e {
			case '"', '\\', '/':
				s[w] = e
			case 'b':
				s[w] = '\b'
			case 'f':
				s[w] = '\f'
			case 'n':
				s[w] = '\n'
			case 'r':
				s[w] = '\r'
			case 't':
				s[w] = '\t'
			case 'u':
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				if r >= 0xDC00 && r <= 0xDFFF {
					p.pos -= 6
					return "", p.fail("lone low surrogate escape (\\uDC00-\\uDFFF without a high surrogate before it)")
				}
				if r >= 0xD800 && r <= 0xDBFF {
					if p.pos+1 >= len(s) || s[p.pos] != '\\' || s[p.pos+1] != 'u' {
						return "", p.fail("lone high surrogate escape: expected a \\uDC00-\\uDFFF escape")
					}
					p.pos += 2
					lo, err := p.hex4()
					if err != nil {
						return "", err
					}
					if lo < 0xDC00 || lo > 0xDFFF {
						p.pos -= 6
						return "", p.fail("lone high surrogate escape: expected a \\uDC00-\\uDFFF escape")
					}
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				}
				// A \uXXXX escape is 6 bytes (12 for a pair) and its UTF-8
				// form at most 3 (4), so this stays behind p.pos.
				w += utf8.EncodeRune(s[w:], r)
				continue
			default:
				p.pos--
				return "", p.fail("invalid escape in string, found " + p.found())
			}
			w++
		case c < 0x20:
			return "", p.fail("control character in string (must be escaped)")
		case c < 0x80:
			s[w] = c
			w++
			p.pos++
		default:
			r, size := utf8.DecodeRune(s[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.fail("invalid UTF-8 in string")
			}
			copy(s[w:], s[p.pos:p.pos+size])
			w += size
			p.pos += size
		}
	}
	return "", p.fail("unterminated string")
}

func (p *parser) hex4() (rune, *Error) {
	if len(p.src)-p.pos < 4 {
		return 0, p.fail("expected 4 hex digits after \\u")
	}
	var r rune
	for i := 0; i < 4; i++ {
		c := p.src[p.pos+i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			p.pos += i
			return 0, p.fail("expected 4 hex digits after \\u, found " + p.found())
		}
		r = r<<4 | rune(d)
	}
	p.pos += 4
	return r, nil
}
