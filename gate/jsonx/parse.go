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
	// Skip names members whose value, when an array or an object, the
	// caller does not read (the gate's chunk "metadata"): it is checked as
	// everything else is (syntax, depth, values, duplicate keys, with the
	// same errors) but not kept, and is null in the tree. A hostile
	// metadata object of 350,000 keys then costs the parse its keys while
	// they are checked, not a node for every key and value.
	Skip string
	// CheckOnly checks the whole document as Skip checks a value and keeps
	// none of it: the result is null unless the document is a scalar. For
	// a caller that only needs to know the document is valid.
	CheckOnly bool
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
// copy and the node arena, not one string per value. The returned Value
// never aliases data: the caller may reuse its buffer.
func Parse(data []byte, maxDepth int) (Value, error) {
	return ParseWith(data, Limits{MaxDepth: maxDepth})
}

// ParseWith is Parse with every limit.
func ParseWith(data []byte, lim Limits) (Value, error) {
	return parseOnce(append([]byte(nil), data...), lim)
}

// ParseInPlace is Parse without the copy, for a caller that owns data and
// is done with it (a Wasm guest's input buffer): escaped strings are
// unescaped in place, so data is modified, and the returned Value aliases it.
// The caller must not use or modify data afterwards.
func ParseInPlace(data []byte, maxDepth int) (Value, error) {
	return parseOnce(data, Limits{MaxDepth: maxDepth})
}

// ParseInPlaceWith is ParseInPlace with every limit.
func ParseInPlaceWith(data []byte, lim Limits) (Value, error) {
	return parseOnce(data, lim)
}

func parseOnce(data []byte, lim Limits) (Value, error) {
	var ps Parser
	v, err := ps.parse(data, lim)
	if err != nil {
		return Value{}, err
	}
	return *v, nil
}

// ParseString is Parse over a string.
func ParseString(src string, maxDepth int) (Value, error) {
	return Parse([]byte(src), maxDepth)
}

// Parser parses one document after another and keeps its memory (the copy
// of the input, the node arena, the scratch) for the next, so a long-lived
// caller such as a Wasm guest's engine allocates almost nothing per parse
// and rarely makes TinyGo collect. The zero Parser is ready to use. The
// Value a parse returns, and every Value and string read from it, is valid
// only until the next parse with the same Parser: copy what you keep.
// A Parser is not safe for concurrent use.
type Parser struct {
	d      *document
	buf    []byte // Parse's copy of the input
	frames []frame
	hi     int // nodes the previous parse used, cleared by the next
	small  int // parses in a row that used under a quarter of an oversized arena
	rep    Repeats
	keys   *objectKeys // made at the first object with over 8 keys
}

// Memory a Parser keeps between parses without question: 4 MiB of copy,
// of arena (256 Ki nodes) and of duplicate-check memory, more than any
// document within the gate's default limits needs (a 1 MiB request holds
// at most 132 Ki values). Kept, a TinyGo instance allocates the memory
// once, while its heap is still whole, and never needs to find that much
// contiguous room again: allocated afresh for each large document, it
// had to, in a heap that the small buffers kept between calls had cut
// into pieces, and the module trapped. More than this (a policy that
// raises the limits) is dropped by the first parse that needs under a
// quarter of it.
const (
	retainBytes = 4 << 20
	retainNodes = 1 << 18
	dropAfter   = 1
)

// Trim drops the Parser's memory beyond what it keeps without question
// (an arena, a copy or duplicate-check memory a document over the gate's
// default limits left), for a caller done with the last parse's Value,
// which must not be used after: that much is not kept until the next
// large document.
func (ps *Parser) Trim() {
	if ps.d != nil && cap(ps.d.nodes) > retainNodes {
		ps.d.nodes, ps.d.root, ps.hi, ps.small = nil, Value{}, 0, 0
	}
	if ps.d != nil {
		ps.d.src = nil
	}
	if cap(ps.buf) > retainBytes {
		ps.buf = nil
	}
	if cap(ps.rep.a) > retainNodes {
		ps.rep = Repeats{}
	}
}

// Parse parses a copy of data (see the package function Parse for the
// rules) into the Parser's reused memory.
func (ps *Parser) Parse(data []byte, lim Limits) (*Value, error) {
	if ps.small >= dropAfter && cap(ps.buf) > retainBytes && len(data) <= retainBytes {
		ps.buf = nil
	}
	ps.buf = append(ps.buf[:0], data...)
	v, err := ps.parse(ps.buf, lim)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// ParseInPlace parses data itself, as the package function ParseInPlace
// does: data is modified and the result aliases it.
func (ps *Parser) ParseInPlace(data []byte, lim Limits) (*Value, error) {
	v, err := ps.parse(data, lim)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// countNodes returns an upper bound of the arena nodes a document needs:
// every value but the top-level one follows a '[', '{', ',' or ':' outside
// a string. It stops counting past maxValues (> 0), and at a bracket that
// opens level maxDepth+1 (maxDepth > 0): the parse fails there at the
// latest, so nothing after it needs a node. Without that stop, 1 MiB of
// '[' (refused at level 33) had a 16 MiB arena allocated first, and a
// module whose heap had grown took seconds to find room for it, or trapped.
// Inside the value of a member named skip (written without escapes), only
// keys take nodes (see Limits.Skip), so only ':' is counted there.
func countNodes(src []byte, maxValues, maxDepth int, skip string) int {
	n, depth := 0, 0
	skipDepth := -1 // the depth the skipped value closes back to; -1: not in one
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case ',':
			if skipDepth < 0 {
				n++
			}
		case ':':
			n++
		case '[', '{':
			if skipDepth < 0 {
				n++
			}
			if depth++; maxDepth > 0 && depth > maxDepth {
				i = len(src)
			}
		case ']', '}':
			if depth--; depth == skipDepth {
				skipDepth = -1
			}
		case '"':
			// Skip the string: plain bytes fast, an escape's next byte too.
			start := i + 1
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
			if skip != "" && skipDepth < 0 && i-start == len(skip) && i < len(src) && view(src[start:i]) == skip {
				// A key? Then its value, if a container, is skipped.
				j := i + 1
				for j < len(src) && (src[j] == ' ' || src[j] == '\n' || src[j] == '\t' || src[j] == '\r') {
					j++
				}
				if j < len(src) && src[j] == ':' {
					for j++; j < len(src) && (src[j] == ' ' || src[j] == '\n' || src[j] == '\t' || src[j] == '\r'); j++ {
					}
					if j < len(src) && (src[j] == '[' || src[j] == '{') {
						n++ // the member's ':' (its value's node, a null)
						skipDepth = depth
						i = j // the bracket: its depth counts, not its node
						if depth++; maxDepth > 0 && depth > maxDepth {
							i = len(src)
						}
					}
				}
			}
		}
	}
	if maxValues > 0 && n > maxValues {
		n = maxValues
	}
	return n
}

// countKeys is countNodes for a CheckOnly parse: only the keys of open
// objects take nodes, and there is one ':' outside strings per key.
func countKeys(src []byte) int {
	n := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case ':':
			n++
		case '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		}
	}
	return n
}

// maxSource keeps every offset in an int32.
const maxSource = 1<<31 - 1

func (ps *Parser) parse(src []byte, lim Limits) (*Value, *Error) {
	if len(src) > maxSource {
		return nil, &Error{Offset: maxSource, Msg: "document larger than 2 GiB", TooMany: true}
	}
	if ps.d == nil {
		ps.d = &document{}
	}
	d := ps.d
	// Drop oversized memory (see retainNodes), and clear the nodes the
	// previous parse used: their pointers would cost the collector a mark
	// each, for nothing.
	if ps.small >= dropAfter {
		d.nodes, ps.hi, ps.small = nil, 0, 0 // Parse has dropped buf
	}
	if cap(ps.rep.a) > retainNodes && 4*len(src) < cap(ps.rep.a) {
		ps.rep = Repeats{} // more than is kept, and more keys than this document has bytes/4
	}
	clear(d.nodes[:ps.hi])
	d.root = Value{}
	d.src = src
	// One arena of the right size, allocated once: growing by doubling
	// leaves garbage that makes a fresh TinyGo instance collect several
	// more times while its heap grows. The stack of unfinished containers'
	// items shares it (parser.buf), so a parse allocates nothing else.
	arena := d.nodes[:cap(d.nodes)]
	need := countNodes(src, lim.MaxValues, lim.MaxDepth, lim.Skip)
	if lim.CheckOnly {
		need = countKeys(src)
	}
	if len(arena) < need {
		arena = make([]Value, need)
	}
	if ps.frames == nil {
		ps.frames = make([]frame, 0, 16)
	}
	p := parser{d: d, src: src, maxDepth: lim.MaxDepth, maxValues: lim.MaxValues, values: 1, // values: the top-level one
		buf: arena, top: len(arena), frames: ps.frames[:0], skip: lim.Skip, skipNext: lim.CheckOnly}
	v, err := p.parse(ps)
	ps.frames = p.frames[:0]
	d.nodes = p.buf[:p.front]
	ps.hi = len(d.nodes)
	if big := cap(d.nodes) > retainNodes || cap(ps.buf) > retainBytes; big && 4*len(d.nodes) < cap(d.nodes) {
		ps.small++
	} else {
		ps.small = 0
	}
	if err != nil {
		d.nodes = d.nodes[:0]
		return nil, err
	}
	v.d = d
	d.root = v
	return &d.root, nil
}

type frame struct {
	kind  Kind
	skip  bool // inside a skipped value (Limits.Skip): only its objects' keys are kept, until they close
	start int  // parser.top when the container opened: its items are buf[top:start], last first
	open  int  // byte offset of the opening bracket, for error messages
}

// parser is the state of one parse.
type parser struct {
	d         *document
	src       []byte // owned: escaped strings are rewritten in place
	pos       int
	maxDepth  int
	maxValues int
	values    int
	// buf is the arena: finished containers' items from the front
	// (buf[:front], d set), and the stack of open containers' finished
	// items from the back (buf[top:], newest first, d not yet set). Every
	// value is in at most one of the two, so countNodes sizes both. What is
	// left in the gap between them has no d: nothing for the collector.
	buf        []Value
	front, top int
	frames     []frame
	skip       string // Limits.Skip
	skipNext   bool   // the value being read is a Skip member's
}

// objectKeys are the member names of the object the parser is closing:
// items hold a key every stride values (2: key, value; 1: keys alone, in
// a skipped value), and a key is (off, n) in src.
type objectKeys struct {
	src    []byte
	items  []Value
	stride int
}

func (k *objectKeys) Key(i int) string {
	v := &k.items[k.stride*i]
	return view(k.src[v.off : v.off+v.n])
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

// parse parses p.src; ps lends the duplicate-key check its memory (a
// parameter, not a field of p: escape analysis would then move a local
// Parser to the heap).
func (p *parser) parse(ps *Parser) (Value, *Error) {
	p.skipWS()
	for {
		// Expecting a value.
		if p.pos >= len(p.src) {
			return Value{}, p.fail("expected a value, found end of input")
		}
		var v Value // d is set when v reaches the arena
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
			skip := p.skipNext || len(p.frames) > 0 && p.frames[len(p.frames)-1].skip
			p.skipNext = false
			p.frames = append(p.frames, frame{kind: k, skip: skip, start: p.top, open: p.pos})
			p.pos++
			p.skipWS()
			if p.pos < len(p.src) && p.src[p.pos] == closer {
				p.pos++
				v, _ = p.close(ps) // empty: no duplicate keys
				break
			}
			if k == Object {
				if err := p.key(); err != nil {
					return Value{}, err
				}
			}
			continue
		case c == '"':
			off, n, err := p.str()
			if err != nil {
				return Value{}, err
			}
			v.kind, v.off, v.n = String, int32(off), int32(n)
		case c == '-' || (c >= '0' && c <= '9'):
			if err := p.number(&v); err != nil {
				return Value{}, err
			}
		case c == 't':
			if err := p.literal("true"); err != nil {
				return Value{}, err
			}
			v.kind, v.b = Bool, true
		case c == 'f':
			if err := p.literal("false"); err != nil {
				return Value{}, err
			}
			v.kind = Bool
		case c == 'n':
			if err := p.literal("null"); err != nil {
				return Value{}, err
			}
		default:
			return Value{}, p.fail("expected a value, found " + p.found())
		}

		// A value is complete: attach it and close every container it ends.
		p.skipNext = false // a scalar Skip value is kept
		for {
			if len(p.frames) == 0 {
				p.skipWS()
				if p.pos != len(p.src) {
					return Value{}, p.fail("expected end of input after the JSON value, found " + p.found())
				}
				return v, nil
			}
			f := p.frames[len(p.frames)-1]
			if err := p.add(v, !f.skip); err != nil {
				return Value{}, err
			}
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
				var err *Error
				if v, err = p.close(ps); err != nil {
					return Value{}, err
				}
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
	off, n, err := p.str()
	if err != nil {
		return err
	}
	p.skipWS()
	if p.pos >= len(p.src) || p.src[p.pos] != ':' {
		return p.fail("expected ':' after object key, found " + p.found())
	}
	p.pos++
	p.skipWS()
	if p.skip != "" && len(p.frames) > 0 && !p.frames[len(p.frames)-1].skip && view(p.src[off:off+n]) == p.skip {
		p.skipNext = true
	}
	return p.add(Value{kind: String, off: int32(off), n: int32(n)}, true)
}

// add counts a finished value against MaxValues and, with keep, adds it to
// the open container's items (a value inside a skipped one is counted
// only; keys are always kept, for the duplicate check).
func (p *parser) add(v Value, keep bool) *Error {
	p.values++
	if p.maxValues > 0 && p.values > p.maxValues {
		return &Error{Offset: p.pos, Msg: "more than " + strconv.Itoa(p.maxValues) + " values", TooMany: true}
	}
	if !keep {
		return nil
	}
	if p.top == p.front {
		p.grow()
	}
	p.top--
	p.buf[p.top] = v
	return nil
}

// grow doubles the arena. countNodes makes this unreachable in practice; it
// is the safe path should the count ever fall short.
func (p *parser) grow() {
	g := make([]Value, 2*len(p.buf)+16)
	copy(g, p.buf[:p.front])
	delta := len(g) - len(p.buf)
	copy(g[p.top+delta:], p.buf[p.top:])
	for i := range p.frames {
		p.frames[i].start += delta
	}
	p.top += delta
	p.buf = g
}

// close pops the innermost container and returns it as a value whose items
// are moved, in document order and next to each other, to the front of the
// arena. An object with a repeated key is an error.
func (p *parser) close(ps *Parser) (Value, *Error) {
	f := p.frames[len(p.frames)-1]
	p.frames = p.frames[:len(p.frames)-1]
	items := p.buf[p.top:f.start]
	for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
		items[i], items[j] = items[j], items[i]
	}
	stride := 2
	if f.skip {
		stride = 1 // keys alone
	}
	if f.kind == Object {
		if err := p.checkDuplicates(ps, items, stride, f.open); err != nil {
			return Value{}, err
		}
	}
	if f.skip {
		p.top = f.start
		return Value{}, nil // null
	}
	first := p.front
	moved := p.buf[first : first+len(items)]
	copy(moved, items) // front <= top, so this moves left; copy allows the overlap
	for i := range moved {
		moved[i].d = p.d
	}
	p.front += len(items)
	p.top = f.start
	return Value{kind: f.kind, off: int32(first), n: int32(len(items))}, nil
}

// text is v.text() for a value still on the stack (no d yet).
func (p *parser) text(v *Value) string { return view(p.src[v.off : v.off+v.n]) }

// checkDuplicates rejects an object with a repeated key: keys are hashed
// and compared through Repeats, whose cost is linear in the keys' bytes
// for any input (repeats.go).
func (p *parser) checkDuplicates(ps *Parser, items []Value, stride, open int) *Error {
	n := len(items) / stride
	dup := -1
	switch {
	case n < 2:
		return nil
	case n <= 4:
		// Most objects: pairwise, bytes (at most 1.5 times the keys' own).
		for i := 1; i < n && dup < 0; i++ {
			k := p.text(&items[stride*i])
			for j := 0; j < i; j++ {
				if EqualKeys(p.text(&items[stride*j]), k) {
					dup = i
					break
				}
			}
		}
	case n <= 8:
		// Pairwise over hashes on the stack.
		var h [8]uint64
		for i := 0; i < n && dup < 0; i++ {
			k := p.text(&items[stride*i])
			h[i] = HashKey(k)
			for j := 0; j < i; j++ {
				if h[j] == h[i] && EqualKeys(p.text(&items[stride*j]), k) {
					dup = i
					break
				}
			}
		}
	default:
		h := ps.rep.Hashes(n)
		for i := range h {
			h[i] = HashKey(p.text(&items[stride*i]))
		}
		if ps.keys == nil {
			ps.keys = &objectKeys{}
		}
		ps.keys.src, ps.keys.items, ps.keys.stride = p.src, items, stride
		dup, _ = ps.rep.First(ps.keys)
		ps.keys.src, ps.keys.items = nil, nil
	}
	if dup < 0 {
		return nil
	}
	k := p.text(&items[stride*dup])
	if len(k) > 64 {
		k = k[:64] + "..."
	}
	// The offset points at the object's opening brace: the parser does not
	// keep per-key offsets, and the key is named in the message.
	return &Error{Offset: open, Msg: "duplicate key \"" + k + "\" in object (ambiguous: parsers disagree on which value wins)"}
}

func (p *parser) literal(word string) *Error {
	// view, not string(...): TinyGo allocates for the conversion.
	if len(p.src)-p.pos >= len(word) && view(p.src[p.pos:p.pos+len(word)]) == word {
		p.pos += len(word)
		return nil
	}
	return p.fail("expected a value (invalid literal), found " + p.found())
}

// number reads a number into v: its text only. The float64 is computed
// when a caller asks (Value.Float), so the many numbers nobody reads (chunk
// metadata) cost no conversion, and a Value has no room to spend on one.
// Overflow is still an error here: it is checked by converting the few
// numbers that could overflow, those with an exponent or over 308 integer
// digits (anything else is below 1e308).
func (p *parser) number(v *Value) *Error {
	start := p.pos
	s := p.src
	if p.pos < len(s) && s[p.pos] == '-' {
		p.pos++
	}
	if p.pos >= len(s) || s[p.pos] < '0' || s[p.pos] > '9' {
		return p.fail("expected a digit in number, found " + p.found())
	}
	intStart := p.pos
	if s[p.pos] == '0' {
		p.pos++
		if p.pos < len(s) && s[p.pos] >= '0' && s[p.pos] <= '9' {
			return p.fail("leading zero in number")
		}
	} else {
		p.digits()
	}
	mayOverflow := p.pos-intStart > 308
	if p.pos < len(s) && s[p.pos] == '.' {
		p.pos++
		if p.pos >= len(s) || s[p.pos] < '0' || s[p.pos] > '9' {
			return p.fail("expected a digit after '.' in number, found " + p.found())
		}
		p.digits()
	}
	if p.pos < len(s) && (s[p.pos] == 'e' || s[p.pos] == 'E') {
		p.pos++
		if p.pos < len(s) && (s[p.pos] == '+' || s[p.pos] == '-') {
			p.pos++
		}
		if p.pos >= len(s) || s[p.pos] < '0' || s[p.pos] > '9' {
			return p.fail("expected a digit in exponent, found " + p.found())
		}
		p.digits()
		mayOverflow = true
	}
	if mayOverflow {
		if raw := view(s[start:p.pos]); !NumberFinite(raw) {
			return &Error{Offset: start, Msg: "number " + clip(raw) + " overflows float64"}
		}
	}
	v.kind, v.off, v.n = Number, int32(start), int32(p.pos-start)
	return nil
}

// parseFloat converts number text the grammar has accepted. The only error
// left is range: underflow gives the nearest (sub)normal or zero, which is
// kept; overflow gives ±Inf, which the parser rejects.
func parseFloat(raw string) float64 {
	f, _ := strconv.ParseFloat(raw, 64)
	return f
}

func isFinite(f float64) bool {
	return f <= 1.7976931348623157e308 && f >= -1.7976931348623157e308 // false for ±Inf and NaN
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

// str reads a string starting at the opening quote and returns where its
// content (unescaped in place when it has escapes) lies in p.src.
func (p *parser) str() (off, n int, err *Error) {
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
			return start, i - start, nil
		case c == '\\':
			p.pos = i
			return p.strEscaped(start)
		case c < 0x20:
			p.pos = i
			return 0, 0, p.fail("control character in string (must be escaped)")
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size <= 1 {
				p.pos = i
				return 0, 0, p.fail("invalid UTF-8 in string")
			}
			i += size
		}
	}
	p.pos = i
	return 0, 0, p.fail("unterminated string")
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
func (p *parser) strEscaped(start int) (off, n int, err *Error) {
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
			return start, w - start, nil
		case c == '\\':
			if p.pos+1 >= len(s) {
				p.pos++
				return 0, 0, p.fail("unterminated escape in string")
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
					return 0, 0, err
				}
				if r >= 0xDC00 && r <= 0xDFFF {
					p.pos -= 6
					return 0, 0, p.fail("lone low surrogate escape (\\uDC00-\\uDFFF without a high surrogate before it)")
				}
				if r >= 0xD800 && r <= 0xDBFF {
					if p.pos+1 >= len(s) || s[p.pos] != '\\' || s[p.pos+1] != 'u' {
						return 0, 0, p.fail("lone high surrogate escape: expected a \\uDC00-\\uDFFF escape")
					}
					p.pos += 2
					lo, err := p.hex4()
					if err != nil {
						return 0, 0, err
					}
					if lo < 0xDC00 || lo > 0xDFFF {
						p.pos -= 6
						return 0, 0, p.fail("lone high surrogate escape: expected a \\uDC00-\\uDFFF escape")
					}
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				}
				// A \uXXXX escape is 6 bytes (12 for a pair) and its UTF-8
				// form at most 3 (4), so this stays behind p.pos.
				w += utf8.EncodeRune(s[w:], r)
				continue
			default:
				p.pos--
				return 0, 0, p.fail("invalid escape in string, found " + p.found())
			}
			w++
		case c < 0x20:
			return 0, 0, p.fail("control character in string (must be escaped)")
		case c < 0x80:
			s[w] = c
			w++
			p.pos++
		default:
			r, size := utf8.DecodeRune(s[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return 0, 0, p.fail("invalid UTF-8 in string")
			}
			copy(s[w:], s[p.pos:p.pos+size])
			w += size
			p.pos += size
		}
	}
	return 0, 0, p.fail("unterminated string")
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
