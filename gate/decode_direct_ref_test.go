package gate

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// decodeDirectRef is the direct decoder as it was before it was reworked
// for TinyGo (decode_direct.go says what changed), kept as the reference
// the new one is compared with (TestDecodeDirectMatchesRef,
// FuzzDecodeDirectRef): on every input both give up, or both give the same
// Request. It is itself checked against the tree decoder, as it was.

// refDecoder is the state of one direct decode.
type refDecoder struct {
	src       []byte
	pos       int
	lim       Limits // resolved
	values    int
	maxValues int // 0: no limit (as in jsonx)
	m         *requestMemory
	owned     bool // m is the engine's: reuse it; else allocate what the Request keeps
	kstart    int  // where the last key read starts in src
	total     int  // chunk text bytes so far
	dims      int  // the embedding length all embeddings must share; 0 until one is seen
	k         int  // chunks decoded so far, over every list (index of the next block)
}

// decodeDirectRef decodes data into m (owned: the engine's memory, reused) or
// into fresh memory (m only lends its scratch; nil: a fresh one); ok is
// false when it gave up (see above). lim is resolved.
func decodeDirectRef(data []byte, lim *Limits, m *requestMemory, owned bool) (req *Request, ok bool) {
	if m == nil {
		// Room for a typical chunk's strings, so the scratch rarely grows.
		m = &requestMemory{}
	}
	d := &refDecoder{src: data, lim: *lim, values: 1, maxValues: lim.MaxRequestBytes / 4, m: m, owned: owned}
	if owned {
		m.release(len(data))
		m.floats = m.floats[:0]
		m.req = Request{}
		req = &m.req
	} else {
		req = &Request{}
	}
	ok = d.request(req)
	d.src = nil // not kept past the call (the input is the caller's)
	if owned {
		m.measure()
	}
	if !ok {
		return nil, false
	}
	return req, true
}

func (d *refDecoder) ws() {
	i, s := d.pos, d.src
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	d.pos = i
}

// next skips white space and consumes c when it is the next byte.
func (d *refDecoder) next(c byte) bool {
	d.ws()
	if d.pos < len(d.src) && d.src[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

// peek skips white space and returns the next byte (0 at the end).
func (d *refDecoder) peek() byte {
	d.ws()
	if d.pos < len(d.src) {
		return d.src[d.pos]
	}
	return 0
}

// count charges one value against the budget (the tree parser counts the
// top-level value, every key and every member or element).
func (d *refDecoder) count() bool {
	d.values++
	return d.maxValues <= 0 || d.values <= d.maxValues
}

// open consumes the opening bracket c of a container at nesting level
// (the top-level object is level 1); the tree parser refuses level >
// MaxDepth.
func (d *refDecoder) open(c byte, level int) bool {
	return level <= d.lim.MaxDepth && level <= maxFastLevel && d.next(c)
}

// more is called after a member or element: true when a ',' follows, false
// at the closer (done set), false with done unset on anything else.
func (d *refDecoder) more(closer byte) (more, done bool) {
	c := d.peek()
	d.pos++
	if c == ',' {
		return true, false
	}
	return false, c == closer
}

// key reads `"name":` and returns the name as a view of the input. Names
// with escapes are given up on (rare, and they would need unescaping to be
// compared).
func (d *refDecoder) key() (string, bool) {
	if d.peek() != '"' || !d.count() {
		return "", false
	}
	s := d.src
	start := d.pos + 1
	i := scanPlainRef(s, start)
	for i < len(s) && s[i] >= 0x80 {
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return "", false
		}
		i = scanPlainRef(s, i+size)
	}
	if i >= len(s) || s[i] != '"' {
		return "", false
	}
	d.pos = i + 1
	d.kstart = start
	if !d.next(':') {
		return "", false
	}
	d.ws()
	return bytesView(s[start:i]), true
}

// null consumes a JSON null when it is next.
func (d *refDecoder) null() bool {
	return d.peek() == 'n' && d.literal("null")
}

// scanPlain returns the index of the first byte at or after i that a JSON
// string cannot hold as it is: '"', '\\', a control byte or a byte >= 0x80
// (len(s) when none). Eight bytes at a time: the DL19 texts run ~100 plain
// bytes between escapes.
func scanPlainRef(s []byte, i int) int {
	for i+8 <= len(s) {
		b := s[i : i+8]
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		q := x ^ ('"' * ones8)
		bs := x ^ ('\\' * ones8)
		// A byte's high bit is set in the result when it is < 0x20, '"' or
		// '\\' (the classic has-less-than/has-zero tests, which have no false
		// negatives; a false positive only sends this block to the byte loop)
		// or >= 0x80.
		if ((x-0x20*ones8)&^x|(q-ones8)&^q|(bs-ones8)&^bs|x)&high8 != 0 {
			break
		}
		i += 8
	}
	for i < len(s) && plainByteRef[s[i]] {
		i++
	}
	return i
}

// plainByteRef marks the bytes a JSON string holds as they are: ASCII except
// control characters, '"' and '\\'.
var plainByteRef = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads the string at d.pos (after white space) and appends it,
// unescaped, to dst. Same rules as jsonx: valid UTF-8, no raw control
// characters, \u escapes with surrogates in pairs only.
func (d *refDecoder) str(dst []byte) ([]byte, bool) {
	if d.peek() != '"' {
		return dst, false
	}
	s := d.src
	i := d.pos + 1
	for {
		j := scanPlainRef(s, i)
		dst = append(dst, s[i:j]...)
		i = j
		if i >= len(s) {
			return dst, false
		}
		switch c := s[i]; {
		case c == '"':
			d.pos = i + 1
			return dst, true
		case c == '\\':
			if i+1 >= len(s) {
				return dst, false
			}
			e := s[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
			case 'b':
				e = '\b'
			case 'f':
				e = '\f'
			case 'n':
				e = '\n'
			case 'r':
				e = '\r'
			case 't':
				e = '\t'
			case 'u':
				r, ok := hex4Ref(s, i)
				if !ok || (r >= 0xDC00 && r <= 0xDFFF) {
					return dst, false
				}
				i += 4
				if r >= 0xD800 && r <= 0xDBFF {
					if i+1 >= len(s) || s[i] != '\\' || s[i+1] != 'u' {
						return dst, false
					}
					lo, ok := hex4Ref(s, i+2)
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						return dst, false
					}
					i += 6
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default:
				return dst, false
			}
			dst = append(dst, e)
		case c < 0x20:
			return dst, false
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size <= 1 {
				return dst, false
			}
			dst = append(dst, s[i:i+size]...)
			i += size
		}
	}
}

func hex4Ref(s []byte, i int) (rune, bool) {
	if i < 0 || len(s)-i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number reads a number (jsonx's grammar) and converts it as
// jsonx.Value.Float does; an overflow gives up.
func (d *refDecoder) number() (float64, bool) {
	d.ws()
	start := d.pos
	if !d.numberText() {
		return 0, false
	}
	if f, ok := simpleFloatRef(d.src[start:d.pos]); ok {
		return f, true
	}
	return d.numberAt(start)
}

// pow10Ref are the powers of ten a float64 holds exactly.
var pow10Ref = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// simpleFloat converts number text of the form -?digits(.digits)? with at
// most 15 significant digits (every score and most embeddings) as one exact
// integer divided by an exact power of ten: a single IEEE division, so the
// result is the correctly rounded value, the same bits strconv.ParseFloat
// gives (Clinger's fast path, which strconv also takes, after a slower
// general scan; under TinyGo that scan was most of a number's cost). ok is
// false for anything else (exponents, longer mantissas): use ParseFloat.
func simpleFloatRef(t []byte) (float64, bool) {
	neg := false
	if len(t) > 0 && t[0] == '-' {
		neg, t = true, t[1:]
	}
	var mant uint64
	digits, frac, dot := 0, 0, false
	for _, c := range t {
		switch {
		case c >= '0' && c <= '9':
			if mant != 0 || c != '0' {
				digits++
			}
			mant = mant*10 + uint64(c-'0')
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if digits > 15 || frac >= len(pow10Ref) {
		return 0, false
	}
	f := float64(mant) / pow10Ref[frac]
	if neg {
		f = -f
	}
	return f, true
}

func isFinite64Ref(f float64) bool {
	return f <= 1.7976931348623157e308 && f >= -1.7976931348623157e308
}

// numberText consumes a number's text, checking the grammar.
func (d *refDecoder) numberText() bool {
	s, i := d.src, d.pos
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i >= len(s) || s[i] < '0' || s[i] > '9' {
		return false
	}
	if s[i] == '0' {
		i++
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			return false
		}
	} else {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	d.pos = i
	return true
}

// literal consumes word (true, false or null).
func (d *refDecoder) literal(word string) bool {
	// bytesView, not string(...): TinyGo allocates for the conversion.
	if len(d.src)-d.pos >= len(word) && bytesView(d.src[d.pos:d.pos+len(word)]) == word {
		d.pos += len(word)
		return true
	}
	return false
}

// boolean reads true or false.
func (d *refDecoder) boolean() (bool, bool) {
	switch d.peek() {
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	}
	return false, false
}

// skip validates any value (a chunk's metadata) without keeping it: the
// same checks the tree parser makes, duplicate keys included.
func (d *refDecoder) skip(level int) bool {
	switch c := d.peek(); {
	case c == '"':
		var ok bool
		d.m.junk, ok = d.str(d.m.junk[:0])
		return ok
	case c == '-' || (c >= '0' && c <= '9'):
		start := d.pos
		if !d.numberText() {
			return false
		}
		// Like the tree parser, convert only what could overflow: an
		// exponent, or over 308 integer digits.
		t := d.src[start:d.pos]
		for _, c := range t {
			if c == 'e' || c == 'E' {
				_, ok := d.numberAt(start)
				return ok
			}
		}
		if len(t) <= 308 {
			return true
		}
		_, ok := d.numberAt(start)
		return ok
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '[':
		if !d.open('[', level) {
			return false
		}
		if d.next(']') {
			return true
		}
		for {
			if !d.count() || !d.skip(level+1) {
				return false
			}
			more, done := d.more(']')
			if done {
				return true
			}
			if !more {
				return false
			}
		}
	case c == '{':
		if !d.open('{', level) {
			return false
		}
		if d.next('}') {
			return true
		}
		base := len(d.m.keys)
		for {
			k, ok := d.key()
			if !ok || len(d.m.keys)-base >= 2*maxFastKeys {
				return false
			}
			// Duplicate keys: pairwise over this object's keys so far.
			for j := base; j < len(d.m.keys); j += 2 {
				if bytesView(d.src[d.m.keys[j]:d.m.keys[j+1]]) == k {
					return false
				}
			}
			d.m.keys = append(d.m.keys, int32(d.kstart), int32(d.kstart+len(k)))
			if !d.count() || !d.skip(level+1) {
				return false
			}
			more, done := d.more('}')
			if done {
				d.m.keys = d.m.keys[:base]
				return true
			}
			if !more {
				return false
			}
		}
	}
	return false
}

// numberAt converts the number text src[start:d.pos] as jsonx does: an
// underflow is kept (0 or a subnormal), an overflow gives up (the tree
// parser rejects it).
func (d *refDecoder) numberAt(start int) (float64, bool) {
	f, _ := strconv.ParseFloat(bytesView(d.src[start:d.pos]), 64)
	return f, isFinite64Ref(f)
}

// floats reads an array of numbers (an embedding) at nesting level.
func (d *refDecoder) floats(level int) ([]float64, bool) {
	if !d.open('[', level) {
		return nil, false
	}
	out, start := d.m.fl[:0], 0
	if d.owned {
		start = len(d.m.floats)
		out = d.m.floats
	}
	if !d.next(']') {
		for {
			if !d.count() {
				return nil, false
			}
			f, ok := d.number()
			if !ok {
				return nil, false
			}
			// Give up at once past the limit: a hostile 4 MiB array of
			// zeros must not become 16 MB of floats before the tree
			// decoder (which then needs its own memory) reports it.
			if len(out)-start >= d.lim.MaxEmbeddingDims {
				return nil, false
			}
			out = append(out, f)
			more, done := d.more(']')
			if done {
				break
			}
			if !more {
				return nil, false
			}
		}
	}
	n := len(out) - start
	if n == 0 || n > d.lim.MaxEmbeddingDims || (d.dims != 0 && n != d.dims) {
		return nil, false
	}
	d.dims = n
	if d.owned {
		d.m.floats = out
		return out[start:len(out):len(out)], true
	}
	d.m.fl = out
	return append(make([]float64, 0, n), out...), true
}

func (d *refDecoder) request(req *Request) bool {
	if !d.open('{', 1) {
		return false
	}
	seen := 0
	hasQuery := false
	if !d.next('}') {
		for {
			k, ok := d.key()
			if !ok || !d.count() {
				return false
			}
			bit := 0
			switch k {
			case "query":
				bit = seenQuery
				if !d.null() {
					if !d.query(req) {
						return false
					}
					hasQuery = true
				}
			case "chunks":
				bit = seenChunks
				if !d.null() {
					if req.Chunks, ok = d.chunkList(0, 2); !ok {
						return false
					}
				}
			case "query_embedding":
				bit = seenQueryEmbedding
				if !d.null() {
					if req.QueryEmbedding, ok = d.floats(2); !ok {
						return false
					}
				}
			case "results_per_query":
				bit = seenResults
				if !d.null() && !d.results(req) {
					return false
				}
			case "now":
				bit = seenNow
				if !d.null() && !d.now(req) {
					return false
				}
			default:
				return false
			}
			if seen&bit != 0 {
				return false
			}
			seen |= bit
			more, done := d.more('}')
			if done {
				break
			}
			if !more {
				return false
			}
		}
	}
	d.ws()
	return d.pos == len(d.src) && hasQuery
}

func (d *refDecoder) query(req *Request) bool {
	b := d.callerBlock()
	if d.owned {
		b = d.m.query[:0]
	}
	start := len(b)
	b, ok := d.str(b)
	if !ok || len(b)-start > d.lim.MaxQueryBytes {
		return false
	}
	q := strings.TrimSpace(bytesView(b[start:]))
	if q == "" {
		return false
	}
	if d.owned {
		d.m.query = b
	} else {
		d.m.tmp = b
	}
	req.Query = q
	return true
}

func (d *refDecoder) now(req *Request) bool {
	b := d.callerBlock()
	if d.owned {
		b = d.m.now[:0]
	}
	start := len(b)
	b, ok := d.str(b)
	if !ok {
		return false
	}
	s := bytesView(b[start:])
	sec, msg := parseRFC3339(s)
	if msg != "" {
		return false
	}
	if d.owned {
		d.m.now = b
	} else {
		d.m.tmp = b
	}
	req.Now, req.NowSec, req.HasNow = s, sec, true
	return true
}

func (d *refDecoder) results(req *Request) bool {
	if !d.open('[', 2) {
		return false
	}
	var lists [][]Chunk
	if d.owned {
		lists = d.m.rpq[:0]
		if lists == nil {
			lists = make([][]Chunk, 0, 4)
		}
	} else {
		lists = make([][]Chunk, 0, 4)
	}
	if !d.next(']') {
		for {
			if !d.count() || len(lists) >= d.lim.MaxQueries {
				return false
			}
			list, ok := d.chunkList(1+len(lists), 3)
			if !ok {
				return false
			}
			lists = append(lists, list)
			more, done := d.more(']')
			if done {
				break
			}
			if !more {
				return false
			}
		}
	}
	if d.owned {
		d.m.rpq = lists
	}
	req.ResultsPerQuery = lists
	return true
}

// chunkList reads one list of chunks (list li of the request's lists) at
// nesting level.
func (d *refDecoder) chunkList(li, level int) ([]Chunk, bool) {
	if !d.open('[', level) {
		return nil, false
	}
	var cs []Chunk
	if d.owned {
		for len(d.m.lists) <= li {
			d.m.lists = append(d.m.lists, nil)
		}
		cs = d.m.lists[li][:0]
		if cs == nil {
			cs = make([]Chunk, 0, 16)
		}
	} else {
		cs = make([]Chunk, 0, 16)
	}
	if !d.next(']') {
		for {
			if !d.count() || len(cs) >= d.lim.MaxChunks {
				return nil, false
			}
			cs = append(cs, Chunk{})
			if !d.chunk(&cs[len(cs)-1], len(cs)-1, level+1) {
				return nil, false
			}
			more, done := d.more(']')
			if done {
				break
			}
			if !more {
				return nil, false
			}
		}
	}
	if d.owned {
		d.m.lists[li] = cs
	}
	if d.duplicateIDs(cs) {
		return nil, false
	}
	return cs, true
}

// callerBlock returns the block the next caller-owned strings go to.
func (d *refDecoder) callerBlock() []byte {
	if cap(d.m.tmp)-len(d.m.tmp) < callerBlockRoom {
		d.m.tmp = make([]byte, 0, callerBlockSize)
	}
	return d.m.tmp
}

// chunk reads chunk i of its list at nesting level. Its strings are
// unescaped into one buffer: the engine's block for this chunk, or the
// caller-owned Request's current block (callerBlock).
func (d *refDecoder) chunk(c *Chunk, i, level int) bool {
	if !d.open('{', level) {
		return false
	}
	var b []byte
	if d.owned {
		for len(d.m.blocks) <= d.k {
			d.m.blocks = append(d.m.blocks, nil)
		}
		b = d.m.blocks[d.k][:0]
	} else {
		b = d.callerBlock()
	}
	d.k++
	// Where each string lies in b: id, doc_id, title, text, updated_at.
	var at [5][2]int
	hasID := false
	seen := 0
	if !d.next('}') {
		for {
			k, ok := d.key()
			if !ok || !d.count() {
				return false
			}
			bit, field := 0, -1
			switch k {
			case "id":
				bit, field = seenID, 0
			case "doc_id":
				bit, field = seenDocID, 1
			case "title":
				bit, field = seenTitle, 2
			case "text":
				bit, field = seenText, 3
			case "updated_at":
				bit, field = seenUpdated, 4
			case "scores":
				bit = seenScores
				if !d.null() && !d.scores(&c.Scores, level+1) {
					return false
				}
			case "trust":
				bit = seenTrust
				if !d.null() {
					if c.Trust, ok = d.number(); !ok || c.Trust < 0 || c.Trust > 1 {
						return false
					}
					c.HasTrust = true
				}
			case "untrusted":
				bit = seenUntrusted
				if !d.null() {
					if c.Untrusted, ok = d.boolean(); !ok {
						return false
					}
				}
			case "embedding":
				bit = seenEmbedding
				if !d.null() {
					if c.Embedding, ok = d.floats(level + 1); !ok {
						return false
					}
				}
			case "temperature":
				bit = seenTemperature
				if !d.null() {
					if c.Temperature, ok = d.number(); !ok {
						return false
					}
					c.HasTemperature = true
				}
			case "metadata":
				bit = seenMetadata
				if !d.skip(level + 1) {
					return false
				}
			default:
				return false
			}
			if seen&bit != 0 {
				return false
			}
			seen |= bit
			if field >= 0 && !d.null() {
				start := len(b)
				if b, ok = d.str(b); !ok {
					return false
				}
				at[field] = [2]int{start, len(b)}
				switch field {
				case 0:
					if len(b) == start {
						return false // an empty id
					}
					hasID = true
				case 3:
					n := len(b) - start
					d.total += n
					if n > d.lim.MaxChunkBytes || d.total > d.lim.MaxTotalBytes {
						return false
					}
				case 4:
					sec, msg := parseRFC3339(bytesView(b[start:]))
					if msg != "" {
						return false
					}
					c.UpdatedSec, c.HasUpdated = sec, true
				}
			}
			more, done := d.more('}')
			if done {
				break
			}
			if !more {
				return false
			}
		}
	}
	if !hasID {
		start := len(b)
		b = append(b, 'c')
		b = strconv.AppendInt(b, int64(i+1), 10)
		at[0] = [2]int{start, len(b)}
	}
	var all string
	if d.owned {
		d.m.blocks[d.k-1] = b
		all = bytesView(b)
	} else {
		d.m.tmp = b
		all = bytesView(b)
	}
	c.ID = all[at[0][0]:at[0][1]]
	c.DocID = all[at[1][0]:at[1][1]]
	c.Title = all[at[2][0]:at[2][1]]
	c.Text = all[at[3][0]:at[3][1]]
	c.UpdatedAt = all[at[4][0]:at[4][1]]
	return true
}

// Bits of a scores object's keys seen so far.
const (
	seenVector = 1 << iota
	seenBM25
	seenRerank
	seenRRF
	seenBoosted
	seenGraph
)

// scores reads a chunk's scores with the tree decoder's range rules
// (decode_request.go, scores).
func (d *refDecoder) scores(s *Scores, level int) bool {
	if !d.open('{', level) {
		return false
	}
	if d.next('}') {
		return true
	}
	seen := 0
	for {
		k, ok := d.key()
		if !ok || !d.count() {
			return false
		}
		var bit int
		var x *float64
		var has *bool
		nonNeg := true
		switch k {
		case "vector":
			bit, x, has, nonNeg = seenVector, &s.Vector, &s.HasVector, false
		case "bm25":
			bit, x, has = seenBM25, &s.BM25, &s.HasBM25
		case "rerank":
			bit, x, has, nonNeg = seenRerank, &s.Rerank, &s.HasRerank, false
		case "rrf":
			bit, x, has = seenRRF, &s.RRF, &s.HasRRF
		case "boosted":
			bit, x, has = seenBoosted, &s.Boosted, &s.HasBoosted
		case "graph":
			bit, x, has = seenGraph, &s.Graph, &s.HasGraph
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		if !d.null() {
			f, ok := d.number()
			if !ok || (nonNeg && f < 0) {
				return false
			}
			if bit == seenVector {
				if f < -1 || f > 1+vectorSlack {
					return false
				}
				if f <= 0 {
					f = 0
				} else if f > 1 {
					f = 1
				}
			}
			*x, *has = f, true
		}
		more, done := d.more('}')
		if done {
			return true
		}
		if !more {
			return false
		}
	}
}

// duplicateIDs reports whether two chunks of the list share an id:
// pairwise for short lists, else an open-addressing table of chunk indexes
// (reused by the engine) so hostile input stays linear.
func (d *refDecoder) duplicateIDs(cs []Chunk) bool {
	if len(cs) <= 32 {
		i, _ := firstDuplicateID(cs)
		return i >= 0
	}
	size := 64
	for size < 2*len(cs) {
		size *= 2
	}
	var t []int32
	if d.owned {
		t = d.m.ids
	}
	if cap(t) < size {
		t = make([]int32, size)
	}
	t = t[:size]
	for i := range t {
		t[i] = -1
	}
	if d.owned {
		d.m.ids = t
	}
	mask := uint64(size - 1)
	for i := range cs {
		id := cs[i].ID
		h := uint64(14695981039346656037)
		for j := 0; j < len(id); j++ {
			h = (h ^ uint64(id[j])) * 1099511628211
		}
		for p := h & mask; ; p = (p + 1) & mask {
			j := t[p]
			if j < 0 {
				t[p] = int32(i)
				break
			}
			if cs[j].ID == id {
				return true
			}
		}
	}
	return false
}

// checkDirectRef decodes data with the direct decoder and its reference,
// caller-owned and engine-owned, and fails t unless both give up or both
// give the same Request.
func checkDirectRef(t *testing.T, data []byte, lim *Limits, m, mref *requestMemory) {
	t.Helper()
	l := lim.resolved()
	for _, owned := range []bool{false, true} {
		a, b := m, mref
		if !owned {
			a, b = nil, nil
		}
		got, ok := decodeDirect(data, &l, a, owned)
		want, wok := decodeDirectRef(data, &l, b, owned)
		if ok != wok {
			t.Fatalf("owned %v: direct ok %v, reference ok %v\ninput %q", owned, ok, wok, data)
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("owned %v: direct and reference differ:\n got %+v\nwant %+v\ninput %q", owned, got, want, data)
		}
	}
}

func TestDecodeDirectMatchesRef(t *testing.T) {
	var m, mref requestMemory
	inputs := [][]byte{benchRequest(1), benchRequest(20), benchRequest(40)}
	for _, c := range directCases {
		inputs = append(inputs, []byte(c))
	}
	files, _ := filepath.Glob(filepath.Join(goldenRoot, "requests", "*", "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	// Chunks named by their number (c1..c105), and an id that collides
	// with one of those names, in short and long lists.
	for _, n := range []int{12, 105} {
		many := `{"query":"q","chunks":[{}` + strings.Repeat(`,{}`, n-1)
		inputs = append(inputs, []byte(many+`]}`), []byte(many+`,{"id":"c12"}]}`), []byte(many+`,{"id":"c`+strconv.Itoa(n+1)+`"}]}`))
	}
	// Field names next to the known ones, long and short.
	for _, k := range []string{"quer", "queryy", "query_embeddin", "query_embeddings", "results_per_quer",
		"results_per_queryy", "results_per_querx", "i", "idd", "doc", "updated_a", "updated_att", "untruste",
		"untrustedd", "embeddings", "temperatur", "metadat", "metadataa", "vecto", "bm2", "rrff", "graphs", "q\u00fcery"} {
		inputs = append(inputs,
			[]byte(`{"query":"q","`+k+`":1}`),
			[]byte(`{"query":"q","chunks":[{"`+k+`":1}]}`),
			[]byte(`{"query":"q","chunks":[{"scores":{"`+k+`":1}}]}`))
	}
	for _, lim := range directLimits {
		for _, in := range inputs {
			checkDirectRef(t, in, lim, &m, &mref)
		}
	}
}

// FuzzDecodeDirectRef is the direct decoder against its reference.
func FuzzDecodeDirectRef(f *testing.F) {
	for _, c := range directCases {
		f.Add([]byte(c))
	}
	f.Add(benchRequest(2))
	var m, mref requestMemory
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lim := range directLimits {
			checkDirectRef(t, data, lim, &m, &mref)
		}
	})
}
