package decode

import (
	"math/bits"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/ctxgate/ctxgate/gate/internal/number"
	"github.com/ctxgate/ctxgate/gate/internal/swar"
	"github.com/ctxgate/ctxgate/gate/internal/timefmt"
	"github.com/ctxgate/ctxgate/gate/internal/view"
	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/gate/wire"
)

// The direct request decoder: one pass over the JSON straight into a
// Request, with no parse tree, no pre-pass and no copy of the document.
//
// It only ever succeeds. On anything it does not accept as it stands (any
// error, and a few legal but rare shapes: an escaped object key, an object
// in "metadata" with over maxFastKeys keys, nesting deeper than
// maxFastLevel) it gives up, and decodeRequest runs the tree decoder
// (request.go), whose error semantics are the contract: which error
// wins, its message, offset and field. So every error comes from one place,
// and the direct path only has to agree with it on success:
// TestDecodeDirectMatchesTree and FuzzDecodeDirect check exactly that (same
// Request, or the direct path gave up). It reads the input and never writes
// it, so the tree decoder can still run in place over the same bytes.
//
// Everything the tree decoder checks is checked here too, as the success
// condition: syntax (strict, as jsonx), the value budget, depth, duplicate
// keys (metadata included), number overflow, UTF-8, surrogates, unknown
// fields, types, limits, ids, timestamps, embedding lengths. The checks that
// depend on order in the tree decoder (embedding lengths against the first
// one, total text) are order-free as success conditions: all lengths equal,
// the total within the limit. So is the value budget: the count only grows,
// so it is compared with the budget once, at the end.
//
// It is written for TinyGo at -opt=z, which inlines almost nothing: the hot
// paths (a chunk's members, a string, a number) are each one function that
// keeps its position in a local and tests for white space before calling
// anything, field names are matched as packed words (no string compare
// calls), and a string's valid UTF-8 stays in the run that is copied whole.
// Its oracle is the tree decoder (TestDecodeDirectMatchesTree,
// FuzzDecodeDirect): same Request, or it gives up and the tree decoder
// answers. (The first version of this decoder was kept as a second oracle
// for a while; it only added 1,100 lines saying the same.)

const (
	// maxFastLevel bounds the direct decoder's recursion (only metadata
	// recurses): deeper documents take the iterative tree decoder, so the
	// small fixed Wasm stack is never at risk.
	maxFastLevel = 48
	// maxFastKeys bounds the keys of one metadata object, checked for
	// duplicates pairwise (by hash); a bigger object takes the tree
	// decoder.
	maxFastKeys = 64
)

// Memory is what an engine keeps to decode requests (Decode): the tree
// decoder's parser and, for the direct decoder, the Request, its chunk
// lists, one byte block per chunk for the chunk's strings, the embeddings'
// numbers. It is reused by the next call, so a warm guest decodes without
// allocating.
//
// One block per chunk, not one arena for all strings: under TinyGo, marking
// a pointer into an object walks from it to the object's end (jsonx/doc.go),
// so strings pointing into one request-sized arena would cost the collector
// O(strings x request size); per-chunk blocks bound each walk by the chunk.
type Memory struct {
	ps     jsonx.Parser // the tree decoder's, reused
	req    Request
	lists  [][]Chunk // lists[0] for chunks, lists[1+i] for results_per_query[i]
	rpq    [][]Chunk
	blocks [][]byte    // blocks[k]: the strings of the k-th chunk of the request
	embs   [][]float64 // embs[0] for query_embedding, embs[1+k] for the k-th chunk's embedding
	query  []byte
	now    []byte
	ids    []int32  // duplicate-id hash table
	idHash []uint64 // the ids' hashes, for it
	kept   int      // bytes of the buffers above after the last decode (measure)

	// The decoder's scratch, kept too so that metadata or a caller-owned
	// decode does not grow it from nothing every time.
	tmp  []byte    // caller-owned path: the block the Request's strings go to (callerBlock)
	junk []byte    // strings nobody keeps (metadata)
	keys []uint64  // the hashes of the open metadata objects' keys so far
	fl   []float64 // caller-owned path: an embedding before its copy

	// The decoder itself: TinyGo's escape analysis puts a local one on the
	// heap (its methods take its address), once per request.
	dec directDecoder

	// The chunk texts of the last owned decode whose JSON in the request is
	// exactly what the prompt's sources block writes for them (str's asIs),
	// by the decoded text's address and length, so that Evaluate's encoder
	// copies them instead of escaping them again (encode_sources.go).
	asIs    []asIsText
	asIsTab []int32 // open addressing over asIs, by addrHash; -1 is empty
}

// asIsText is a decoded chunk text at address p, n bytes long, whose JSON
// src[at:end] (without the quotes) is what appendEscapedJSON(text, false)
// writes. An address, not a pointer: the text is in the engine's blocks,
// and the table must not keep anything alive.
type asIsText struct {
	p          uintptr
	n, at, end int
}

// addrHash spreads an address over a table's low bits.
func addrHash(p uintptr) uint32 {
	h := uint32(p) * 0x9E3779B1
	return h ^ h>>15
}

// indexAsIs builds asIsTab for asIs (after a successful owned decode).
func (m *Memory) indexAsIs() {
	size := 16
	for size < 2*len(m.asIs) {
		size *= 2
	}
	if cap(m.asIsTab) < size {
		m.asIsTab = make([]int32, size)
	}
	t := m.asIsTab[:size]
	for i := range t {
		t[i] = -1
	}
	mask := uint32(size - 1)
	for i := range m.asIs {
		h := addrHash(m.asIs[i].p) & mask
		for t[h] >= 0 {
			h = (h + 1) & mask
		}
		t[h] = int32(i)
	}
	m.asIsTab = t
}

// AsIs returns text's JSON as src (the request m's last Decode read)
// holds it, when the direct decoder found that it is exactly what the
// prompt's sources block writes for it (str's asIs), else nil. The text is
// known by its address and length: only the very string the decode made,
// in m's blocks, unchanged until m's next Decode, qualifies; a string
// built or changed since has another address.
func (m *Memory) AsIs(text string, src []byte) []byte {
	if m == nil || len(text) == 0 {
		return nil
	}
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
			if a.at < 0 || a.at > a.end || a.end > len(src) {
				return nil
			}
			return src[a.at:a.end]
		}
	}
}

// retainBytes is the memory an engine keeps for its Request without
// question: more than a request within the default limits needs, so a
// TinyGo instance allocates it once and keeps it (jsonx.Parser's rule,
// and why). More (a policy that raises the limits) is dropped when a
// request comes that needs much less.
const retainBytes = 4 << 20

// measure records how much memory m keeps (after an owned decode).
func (m *Memory) measure() {
	n := cap(m.junk) + cap(m.query) + cap(m.now) + 8*cap(m.idHash) + 4*cap(m.ids)
	for _, e := range m.embs {
		n += 8 * cap(e)
	}
	for _, b := range m.blocks {
		n += cap(b)
	}
	m.kept = n
}

// Release drops m's buffers when they are more than it keeps for good
// (retainBytes): the memory of a large request is not kept while m is
// not decoding (the engine checks an answer).
func (m *Memory) Release() { m.release(0) }

// release drops m's buffers when they are larger than a request of n
// bytes is likely to need (its strings take at most n bytes, its numbers
// at most 4n, and capacities run up to twice that): memory one large
// request left is not kept for the small ones after it, in a TinyGo heap
// of a few tens of megabytes.
func (m *Memory) release(n int) {
	if m.kept <= retainBytes || m.kept <= 4*n {
		return
	}
	for i := range m.blocks {
		m.blocks[i] = nil
	}
	m.embs, m.junk, m.query, m.now, m.kept = nil, nil, nil, nil, 0
	// The chunks hold strings over the blocks: they go too, or the blocks
	// stay alive through them.
	m.req, m.lists, m.rpq = Request{}, nil, nil
	m.ids, m.idHash, m.asIs, m.asIsTab, m.tmp, m.fl = nil, nil, nil, nil, nil, nil
}

// directDecoder is the state of one direct decode.
type directDecoder struct {
	src       []byte
	pos       int
	lim       Limits // resolved
	maxLevel  int    // the deepest level open accepts: min(MaxDepth, maxFastLevel)
	values    int    // values so far, counted as the tree parser counts them
	maxValues int
	m         *Memory
	owned     bool // m is the engine's: reuse it; else allocate what the Request keeps
	kstart    int  // where the last key read starts in src
	total     int  // chunk text bytes so far
	dims      int  // the embedding length all embeddings must share; 0 until one is seen
	k         int  // chunks decoded so far, over every list (index of the next block)
	sq        int  // the opening quote of the last string str read
	room      int  // bytes strInto ran short of (str grows and reads again)
	asIs      bool // that string's JSON is what the sources block writes for it (str)
}

// decodeDirect decodes data into m (owned: the engine's memory, reused) or
// into fresh memory (m only lends its scratch; nil: a fresh one); ok is
// false when it gave up (see above). lim is resolved.
func decodeDirect(data []byte, lim *Limits, m *Memory, owned bool) (req *Request, ok bool) {
	if m == nil {
		m = &Memory{}
	}
	d := &m.dec
	*d = directDecoder{src: data, lim: *lim, values: 1, maxValues: valueBudget(lim), m: m, owned: owned}
	if d.maxValues <= 0 {
		d.maxValues = int(^uint(0) >> 1) // no limit (as in jsonx)
	}
	d.maxLevel = lim.MaxDepth
	if d.maxLevel > maxFastLevel {
		d.maxLevel = maxFastLevel
	}
	// A decode that gave up inside a metadata object left its keys here:
	// without this they piled up from one call to the next.
	m.keys = m.keys[:0]
	if owned {
		m.release(len(data))
		m.asIs = m.asIs[:0]
		m.req = Request{}
		req = &m.req
	} else {
		req = &Request{}
	}
	ok = d.request(req) && d.values <= d.maxValues
	d.src = nil // not kept past the call (the input is the caller's)
	if owned {
		m.measure()
		if ok {
			m.indexAsIs()
		} else {
			m.asIs = m.asIs[:0]
		}
	}
	if !ok {
		return nil, false
	}
	return req, true
}

// isSpace marks JSON's white space; callers test s[i] <= ' ' first, so a
// document without white space never calls ws.
func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// ws skips white space at d.pos.
func (d *directDecoder) ws() {
	i, s := d.pos, d.src
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	d.pos = i
}

// next skips white space and consumes c when it is the next byte.
func (d *directDecoder) next(c byte) bool {
	i, s := d.pos, d.src
	for i < len(s) && s[i] <= ' ' && isSpace(s[i]) {
		i++
	}
	if i < len(s) && s[i] == c {
		d.pos = i + 1
		return true
	}
	d.pos = i
	return false
}

// peek skips white space and returns the next byte (0 at the end).
func (d *directDecoder) peek() byte {
	d.ws()
	if d.pos < len(d.src) {
		return d.src[d.pos]
	}
	return 0
}

// open consumes the opening bracket c of a container at nesting level
// (the top-level object is level 1); the tree parser refuses level >
// MaxDepth.
func (d *directDecoder) open(c byte, level int) bool {
	return level <= d.maxLevel && d.next(c)
}

// more is called after a member or element: true when a ',' follows, false
// at the closer (done set), false with done unset on anything else.
func (d *directDecoder) more(closer byte) (more, done bool) {
	i, s := d.pos, d.src
	for i < len(s) && s[i] <= ' ' && isSpace(s[i]) {
		i++
	}
	if i >= len(s) {
		return false, false
	}
	d.pos = i + 1
	return s[i] == ',', s[i] == closer
}

// key reads `"name":` (and the white space after it) and returns the name
// as a view of the input, for metadata, whose keys are anything. Names with
// escapes are given up on (rare, and they would need unescaping to be
// compared).
func (d *directDecoder) key() (string, bool) {
	if d.peek() != '"' {
		return "", false
	}
	d.values++
	s := d.src
	start := d.pos + 1
	i := start
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if !plainByte[c] {
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return "", false
		}
		i += size
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
	return view.String(s[start:i]), true
}

// field reads `"name":` (and the white space after it) where name must be
// one of the request's field names, and returns its code; fNone for
// anything else, which the caller gives up on (an unknown field, or a name
// with escapes or bytes outside printable ASCII, which no field name has
// as it stands).
//
// With sixteen bytes left after the opening quote it loads them as two
// words and finds the closing quote with one has-zero test, instead of a
// loop over the name's bytes (in the module that loop was a tenth of a
// 20-chunk decode); names are matched as words either way, and the word
// path only accepts a name whose words and length are a field's, so its
// bytes are that field's printable ASCII (TestFieldWords, FuzzFieldWords
// hold it to the byte loop).
func (d *directDecoder) field() int {
	s, i := d.src, d.pos
	for i < len(s) && s[i] <= ' ' && isSpace(s[i]) {
		i++
	}
	if i >= len(s) || s[i] != '"' {
		return fNone
	}
	d.values++
	i++
	start := i
	var w0, w1 uint64
	var n int
	if i+16 <= len(s) {
		b := s[i : i+16]
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		z := uint64(b[8]) | uint64(b[9])<<8 | uint64(b[10])<<16 | uint64(b[11])<<24 |
			uint64(b[12])<<32 | uint64(b[13])<<40 | uint64(b[14])<<48 | uint64(b[15])<<56
		// The lowest marked byte is the first '"' (a borrow only marks
		// bytes above a true one).
		if q := (x ^ '"'*swar.Lsb - swar.Lsb) &^ x & swar.Msb; q != 0 {
			n = bits.TrailingZeros64(q) >> 3
			w0 = x & (1<<(8*n) - 1)
		} else if q := (z ^ '"'*swar.Lsb - swar.Lsb) &^ z & swar.Msb; q != 0 {
			n = 8 + bits.TrailingZeros64(q)>>3
			w0, w1 = x, z&(1<<(8*(n-8))-1)
		} else {
			// A name longer than sixteen bytes (results_per_query): its
			// end, then its tail is checked below.
			j := i + 16
			for j < len(s) && j-i <= maxFieldLen && s[j] != '"' {
				j++
			}
			if j >= len(s) || s[j] != '"' || j-i > maxFieldLen {
				return fNone
			}
			w0, w1, n = x, z, j-i
		}
		i += n
	} else {
		for ; i < len(s); i++ {
			c := s[i]
			if c == '"' {
				break
			}
			n := i - start
			if c < 0x20 || c >= 0x7f || c == '\\' || n > 16 {
				return fNone
			}
			if n < 8 {
				w0 |= uint64(c) << (8 * n)
			} else if n < 16 {
				w1 |= uint64(c) << (8 * (n - 8))
			}
		}
		n = i - start
		if i >= len(s) {
			return fNone
		}
	}
	i++
	for i < len(s) && s[i] <= ' ' && isSpace(s[i]) {
		i++
	}
	if i >= len(s) || s[i] != ':' {
		return fNone
	}
	i++
	for i < len(s) && s[i] <= ' ' && isSpace(s[i]) {
		i++
	}
	d.pos = i
	f := fieldOf(w0, w1, n)
	if n > 16 && view.String(s[start+16:start+n]) != fieldTail[f] {
		return fNone
	}
	return f
}

// isNull consumes a null at d.pos (no white space before it: values are
// read right after field, which skips it).
func (d *directDecoder) isNull() bool {
	s, i := d.src, d.pos
	if i+4 <= len(s) && s[i] == 'n' && s[i+1] == 'u' && s[i+2] == 'l' && s[i+3] == 'l' {
		d.pos = i + 4
		return true
	}
	return false
}

// plainByte marks the bytes a JSON string holds as they are: ASCII except
// control characters, '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads the string at d.pos (after white space) and appends it,
// unescaped, to dst. Same rules as jsonx: valid UTF-8, no raw control
// characters, \u escapes with surrogates in pairs only.
//
// It looks for the next byte a string cannot hold as it is ('"', '\\', a
// control byte, a byte >= 0x80) sixteen bytes a step; in a block that has
// one, an exact per-byte mask finds the first without a byte loop. Valid
// UTF-8 is checked (two-byte runes inline: the DL19 texts' are all two
// bytes, in runs) and left in the run; a run is copied once, at a quote or
// an escape, and a run of escapes ("\n\n") is read in one go.
//
// It also tells (d.asIs, with d.sq the opening quote) whether the string's
// JSON as sent is exactly what the prompt's sources block writes for the
// string (appendEscapedJSON, not one line), so the encoder can copy a
// chunk's text from the request instead of escaping it again
// (encode_sources.go, asIsJSON). That holds when the JSON has no '<', '>',
// '&' or '[', no "\/", no raw U+2028 or U+2029, and no \u escape other
// than those the encoder writes itself (\u00XX for a control byte without a
// short form, \u0026, \u003e, \u2028, \u2029, in lower-case hex): every
// other byte and escape ('"' and '\\' escaped, \b \f \n \r \t, valid
// UTF-8) the encoder writes as the request has it (asIsRef and
// TestDecodeDirectAsIs hold the rule against the encoder). The sixteen-byte
// step stops at those four bytes too (and at '^', '|' and '~', which share
// a test with '\\', '<' and '>'), and the exact masks tell them apart. In
// the module that costs the decoder less than a second scan of the kept
// texts costs the encoder, unless a prompt keeps under a fifth of the
// chunks (docs/performance.md).
//
// The reading itself is strInto, which never allocates: a function that
// may (growBytes) keeps a frame of its pointers for TinyGo's collector,
// a few hundred instructions per call in the module. When dst is too
// small, strInto says how much more it needs (d.room) and the string is
// read again from its start into dst grown, at least doubled, by that.
func (d *directDecoder) str(dst []byte) ([]byte, bool) {
	b, ok := d.strInto(dst)
	for !ok && d.room > 0 {
		dst = growBytes(dst, d.room)
		b, ok = d.strInto(dst)
	}
	return b, ok
}

// strInto is str within dst's capacity: on running out it returns false
// with d.room the bytes beyond len(dst) it needs (0 for every other
// failure).
func (d *directDecoder) strInto(dst []byte) ([]byte, bool) {
	d.room = 0
	l0 := len(dst)
	s, i := d.src, d.pos
	for i < len(s) && s[i] <= ' ' && isSpace(s[i]) {
		i++
	}
	if i >= len(s) || s[i] != '"' {
		return dst, false
	}
	d.sq = i
	i++
	base := unsafe.Pointer(unsafe.SliceData(s))
	run := i        // the start of the bytes not yet copied
	var diff uint64 // nonzero once the JSON differs from what the encoder writes
	for {
		for i <= len(s)-16 {
			// No slice bounds check: i+16 <= len(s).
			b := (*[16]byte)(unsafe.Add(base, i))
			x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
				uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
			z := uint64(b[8]) | uint64(b[9])<<8 | uint64(b[10])<<16 | uint64(b[11])<<24 |
				uint64(b[12])<<32 | uint64(b[13])<<40 | uint64(b[14])<<48 | uint64(b[15])<<56
			// Three has-less-than / has-zero tests set the top bit of a
			// byte < 0x20, '"' or '&' ((c&^4)^2 < 0x21: 4 and 2 only
			// fold '&' and '"' onto 0x20), of '\\' '<' '>' '^' '|' '~'
			// (and 0x1c, 0x1e), and of '['; a byte >= 0x80 is a stop by
			// its own top bit (the "| x", which also makes the tests'
			// usual "&^ x" needless). No false negatives; a borrow starts
			// only at a byte a test is true for, so a false positive is
			// only ever above a true one.
			if (((x&^(0x04*swar.Lsb))^0x02*swar.Lsb-0x21*swar.Lsb)|((x|0x62*swar.Lsb)^0x7e*swar.Lsb-swar.Lsb)|(x^'['*swar.Lsb-swar.Lsb)|x|
				((z&^(0x04*swar.Lsb))^0x02*swar.Lsb-0x21*swar.Lsb)|((z|0x62*swar.Lsb)^0x7e*swar.Lsb-swar.Lsb)|(z^'['*swar.Lsb-swar.Lsb)|z)&swar.Msb == 0 {
				i += 16
				continue
			}
			// The exact tests, on the low seven bits y of each byte (no
			// borrow or carry crosses a byte): y+0x60 has its top bit set
			// iff y >= 0x20, (y^'"')+0x7f iff y != '"', and so on; a byte
			// >= 0x80 is a stop by its own top bit and never a mark. m
			// marks the stops, k the bytes the encoder writes otherwise;
			// only the k before the first stop are in this string for sure.
			y := x &^ swar.Msb
			m := (x | ^((y + 0x60*swar.Lsb) & ((y ^ '"'*swar.Lsb) + 0x7f*swar.Lsb) & ((y ^ '\\'*swar.Lsb) + 0x7f*swar.Lsb))) & swar.Msb
			k := ^(((y | 0x02*swar.Lsb) ^ 0x3e*swar.Lsb + 0x7f*swar.Lsb) & ((y ^ '&'*swar.Lsb) + 0x7f*swar.Lsb) & ((y ^ '['*swar.Lsb) + 0x7f*swar.Lsb)) &^ x & swar.Msb
			if m != 0 {
				diff |= k & ((m & -m) - 1)
				i += bits.TrailingZeros64(m) >> 3
				goto stop
			}
			diff |= k
			y = z &^ swar.Msb
			m = (z | ^((y + 0x60*swar.Lsb) & ((y ^ '"'*swar.Lsb) + 0x7f*swar.Lsb) & ((y ^ '\\'*swar.Lsb) + 0x7f*swar.Lsb))) & swar.Msb
			k = ^(((y | 0x02*swar.Lsb) ^ 0x3e*swar.Lsb + 0x7f*swar.Lsb) & ((y ^ '&'*swar.Lsb) + 0x7f*swar.Lsb) & ((y ^ '['*swar.Lsb) + 0x7f*swar.Lsb)) &^ z & swar.Msb
			if m != 0 {
				diff |= k & ((m & -m) - 1)
				i += 8 + bits.TrailingZeros64(m)>>3
				goto stop
			}
			diff |= k
			i += 16
		}
		for i < len(s) && plainByte[s[i]] {
			if c := s[i]; c == '<' || c == '>' || c == '&' || c == '[' {
				diff = 1
			}
			i++
		}
	stop:
		if i >= len(s) {
			return dst, false
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			for c >= utf8.RuneSelf {
				if c >= 0xC2 && c <= 0xDF && i+1 < len(s) && s[i+1]&0xC0 == 0x80 {
					i += 2
				} else {
					r, size := utf8.DecodeRune(s[i:])
					if r == utf8.RuneError && size <= 1 {
						return dst, false
					}
					if r == '\u2028' || r == '\u2029' {
						diff = 1 // escaped by the encoder
					}
					i += size
				}
				if i >= len(s) {
					return dst, false
				}
				c = s[i]
			}
			continue
		}
		// Copy the run (and make room for what an escape adds) without
		// append: under TinyGo every append is a runtime call, and a
		// text's "\n\n" made three.
		if cap(dst)-len(dst) < i-run+4 {
			d.room = len(dst) - l0 + i - run + 4
			return dst[:l0], false
		}
		l := len(dst)
		dst = dst[:l+i-run]
		copy(dst[l:], s[run:i])
		for c == '\\' {
			if i+1 >= len(s) {
				return dst, false
			}
			e := s[i+1]
			i += 2
			switch e {
			case '"', '\\':
			case '/':
				diff = 1 // written back as '/'
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
				r, ok := jsonx.Hex4(s, i)
				if !ok || (r >= 0xDC00 && r <= 0xDFFF) {
					return dst, false
				}
				i += 4
				// The \u escapes the encoder writes (see above), each in
				// one spelling: its last two hex digits in lower case.
				if !(r < 0x20 && (r < '\b' || r == 0x0b || r > '\r') || r == '&' || r == '>' || r == 0x2028 || r == 0x2029) ||
					s[i-2] != lowerHex[r>>4&15] || s[i-1] != lowerHex[r&15] {
					diff = 1
				}
				if r >= 0xD800 && r <= 0xDBFF {
					if i+1 >= len(s) || s[i] != '\\' || s[i+1] != 'u' {
						return dst, false
					}
					lo, ok := jsonx.Hex4(s, i+2)
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						return dst, false
					}
					i += 6
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				}
				l = len(dst)
				dst = dst[:l+utf8.EncodeRune(dst[l:l+4], r)]
				e = 0
			default:
				return dst, false
			}
			if e != 0 {
				l = len(dst)
				dst = dst[:l+1]
				dst[l] = e
			}
			if i >= len(s) {
				return dst, false
			}
			c = s[i]
			if cap(dst)-len(dst) < 4 {
				d.room = len(dst) - l0 + 4
				return dst[:l0], false
			}
		}
		run = i
		if c == '"' {
			d.pos = i + 1
			d.asIs = diff == 0
			return dst, true
		}
		if c < 0x20 {
			return dst, false
		}
	}
}

// lowerHex are the hex digits the JSON encoders write.
const lowerHex = "0123456789abcdef"

// growBytes returns dst with room for n more bytes: a new array (dst's
// stays as it was, for the strings that view it), doubled like append's.
func growBytes(dst []byte, n int) []byte {
	c := 2 * cap(dst)
	if c < len(dst)+n {
		c = len(dst) + n
	}
	if c < 64 {
		c = 64
	}
	b := make([]byte, len(dst), c)
	copy(b, dst)
	return b
}

// number reads a number (jsonx's grammar) and converts it as
// jsonx.Value.Float does (gate/internal/number); an overflow gives up.
func (d *directDecoder) number() (float64, bool) {
	s, i := d.src, d.pos
	for i < len(s) && s[i] <= ' ' && isSpace(s[i]) {
		i++
	}
	f, end, ok := number.Parse(s, i)
	d.pos = end
	return f, ok
}

// plainStringEnd returns the end (past the closing quote) of the string
// at s[i] == '"' when all its bytes are printable ASCII other than '\\',
// else 0. Eight bytes a step: the common metadata string needs no copy.
func plainStringEnd(s []byte, i int) int {
	j := i + 1
	for ; j+8 <= len(s); j += 8 {
		x := uint64(s[j]) | uint64(s[j+1])<<8 | uint64(s[j+2])<<16 | uint64(s[j+3])<<24 |
			uint64(s[j+4])<<32 | uint64(s[j+5])<<40 | uint64(s[j+6])<<48 | uint64(s[j+7])<<56
		// Marks a byte < 0x20, '"', '\\' or >= 0x80 (the has-less-than and
		// has-zero tests of str, on one word).
		if m := ((x - 0x20*swar.Lsb) | (x ^ '"'*swar.Lsb - swar.Lsb) | (x ^ '\\'*swar.Lsb - swar.Lsb) | x) & swar.Msb; m != 0 {
			j += bits.TrailingZeros64(m) >> 3
			break
		}
	}
	for ; j < len(s) && s[j] >= 0x20 && s[j] < 0x80 && s[j] != '\\'; j++ {
		if s[j] == '"' {
			return j + 1
		}
	}
	if j < len(s) && s[j] == '"' {
		return j + 1
	}
	return 0
}

// hasExponent reports whether number text t has an 'e' or 'E'.
func hasExponent(t []byte) bool {
	for _, c := range t {
		if c == 'e' || c == 'E' {
			return true
		}
	}
	return false
}

// literal consumes word (true, false or null).
func (d *directDecoder) literal(word string) bool {
	// bytesView, not string(...): TinyGo allocates for the conversion.
	if len(d.src)-d.pos >= len(word) && view.String(d.src[d.pos:d.pos+len(word)]) == word {
		d.pos += len(word)
		return true
	}
	return false
}

// boolean reads true or false.
func (d *directDecoder) boolean() (bool, bool) {
	switch d.peek() {
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	}
	return false, false
}

// skip validates any value (a chunk's metadata) at nesting level without
// keeping it: the same checks the tree parser makes, duplicate keys
// included. It is one loop with its own stack of open containers, not a
// call per value: under TinyGo a call costs more than a scalar's check,
// and metadata of a million numbers spent most of its time in calls (100
// ns a value in the module, 14 natively). Only strings with escapes or
// bytes >= 0x80, numbers that could overflow and object keys leave the
// loop.
func (d *directDecoder) skip(level int) bool {
	s := d.src
	i := d.pos
	// The open containers: '[' or '{', and where each object's key hashes
	// start in d.m.keys.
	var kind [maxFastLevel + 1]byte
	var base [maxFastLevel + 1]int
	depth := 0
	for {
		// A value starts at i (after white space).
		for i < len(s) && s[i] <= ' ' && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return false
		}
		switch c := s[i]; {
		case c == '[' || c == '{':
			if level+depth > d.maxLevel {
				return false
			}
			kind[depth], base[depth] = c, len(d.m.keys)
			depth++
			i++
			for i < len(s) && s[i] <= ' ' && isSpace(s[i]) {
				i++
			}
			if i < len(s) && s[i] == c+2 { // ']' or '}': empty
				i++
				depth--
				break
			}
			if c == '[' {
				d.values++ // the first element
				if d.values > d.maxValues {
					return false
				}
				continue
			}
			if !d.member(&i, base[depth-1]) {
				return false
			}
			continue
		case c == '"':
			// A string of printable ASCII is checked where it is;
			// anything else (escapes, UTF-8) is decoded, into scratch
			// nobody reads.
			if end := plainStringEnd(s, i); end > 0 {
				i = end
				break
			}
			d.pos = i
			var ok bool
			if d.m.junk, ok = d.str(d.m.junk[:0]); !ok {
				return false
			}
			i = d.pos
		case c == '-' || (c >= '0' && c <= '9'):
			j := numberEnd(s, i)
			if j < 0 {
				return false
			}
			// Finite, as the tree parser checks: only a number with an
			// exponent or over 308 digits can overflow.
			if t := s[i:j]; (len(t) > 16 || hasExponent(t)) && !jsonx.NumberFinite(view.String(t)) {
				return false
			}
			i = j
		case c == 't' || c == 'f' || c == 'n':
			w := "null"
			if c == 't' {
				w = "true"
			} else if c == 'f' {
				w = "false"
			}
			if len(s)-i < len(w) || view.String(s[i:i+len(w)]) != w {
				return false
			}
			i += len(w)
		default:
			return false
		}
		// A value ended at i: go on in its container, closing the
		// containers it ends.
		for {
			if depth == 0 {
				d.pos = i
				return true
			}
			for i < len(s) && s[i] <= ' ' && isSpace(s[i]) {
				i++
			}
			if i >= len(s) {
				return false
			}
			k := kind[depth-1]
			if s[i] == ',' {
				i++
				if k == '[' {
					d.values++ // the next element
					if d.values > d.maxValues {
						return false
					}
				} else if !d.member(&i, base[depth-1]) {
					return false
				}
				break
			}
			if s[i] != k+2 {
				return false
			}
			i++
			depth--
			d.m.keys = d.m.keys[:base[depth]]
		}
	}
}

// member reads an object member's `"key":` at *i for skip, counts the key
// and its value against the budget, and checks the key against the
// object's others (their hashes from base in d.m.keys): pairwise, up to
// maxFastKeys keys. Keys that hash alike are given up on, equal or not:
// the tree decoder's check (jsonx.Repeats) decides them, at a cost no
// choice of keys can make quadratic.
func (d *directDecoder) member(i *int, base int) bool {
	d.pos = *i
	k, ok := d.key()
	if !ok || len(d.m.keys)-base >= maxFastKeys {
		return false
	}
	h := jsonx.HashKey(k)
	for _, o := range d.m.keys[base:] {
		if o == h {
			return false
		}
	}
	d.m.keys = append(d.m.keys, h)
	d.values++ // the value (key counted the key)
	*i = d.pos
	return d.values <= d.maxValues
}

// numberEnd returns the end of the number at s[i] (jsonx's grammar), or -1.
func numberEnd(s []byte, i int) int {
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i >= len(s) || s[i] < '0' || s[i] > '9' {
		return -1
	}
	if s[i] == '0' {
		i++
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			return -1
		}
	} else {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return -1
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
			return -1
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return i
}

// floats reads an array of numbers (an embedding) at nesting level.
func (d *directDecoder) floats(level int) ([]float64, bool) {
	if !d.open('[', level) {
		return nil, false
	}
	// Owned: into the slice this embedding's slot (0 for the query's,
	// 1+k for chunk k's) had last time, one per embedding: a 4096-dim
	// embedding is 32 KiB, where one slice for all of them grew to
	// megabytes by doubling (a hostile request of 100 made a TinyGo
	// instance run out of contiguous room).
	out, start := d.m.fl[:0], 0
	slot := 0
	if level > 2 {
		slot = d.k // chunk() counted this chunk already: d.k is its slot
	}
	if d.owned {
		for len(d.m.embs) <= slot {
			d.m.embs = append(d.m.embs, nil)
		}
		out = d.m.embs[slot][:0]
	}
	if !d.next(']') {
		s := d.src
		for {
			d.values++
			f, end, ok := number.Parse(s, d.pos)
			// Give up at once past the limit: a hostile 4 MiB array of
			// zeros must not become 16 MB of floats before the tree
			// decoder (which then needs its own memory) reports it.
			if !ok || d.values > d.maxValues || len(out)-start >= d.lim.MaxEmbeddingDims {
				return nil, false
			}
			out = append(out, f)
			i := end
			for i < len(s) && s[i] <= ' ' && isSpace(s[i]) {
				i++
			}
			if i >= len(s) {
				return nil, false
			}
			c := s[i]
			i++
			for i < len(s) && s[i] <= ' ' && isSpace(s[i]) {
				i++
			}
			d.pos = i
			if c == ']' {
				break
			}
			if c != ',' {
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
		d.m.embs[slot] = out
		return out[:len(out):len(out)], true
	}
	d.m.fl = out
	return append(make([]float64, 0, n), out...), true
}

func (d *directDecoder) request(req *Request) bool {
	if !d.open('{', 1) {
		return false
	}
	seen := 0
	hasQuery := false
	if !d.next('}') {
		for {
			f := d.field()
			d.values++
			if f < firstRequestField || f > lastRequestField {
				return false
			}
			// A repeated key is a syntax error: one bit per field seen.
			bit := 1 << (f - firstRequestField)
			var ok bool
			switch f {
			case fQuery:
				if !d.isNull() {
					if !d.query(req) {
						return false
					}
					hasQuery = true
				}
			case fChunks:
				if !d.isNull() {
					if req.Chunks, ok = d.chunkList(0, 2); !ok {
						return false
					}
				}
			case fQueryEmbedding:
				if !d.isNull() {
					if req.QueryEmbedding, ok = d.floats(2); !ok {
						return false
					}
				}
			case fResultsPerQuery:
				if !d.isNull() && !d.results(req) {
					return false
				}
			case fNow:
				if !d.isNull() && !d.now(req) {
					return false
				}
			case fVectorMetric, fRerankScale:
				if !d.isNull() && !d.name(req, f) {
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

func (d *directDecoder) query(req *Request) bool {
	b := d.callerBlock()
	if d.owned {
		b = d.m.query[:0]
	}
	start := len(b)
	b, ok := d.str(b)
	if !ok || len(b)-start > d.lim.MaxQueryBytes {
		return false
	}
	q := strings.TrimSpace(view.String(b[start:]))
	if wire.BlankQuery(q) {
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

func (d *directDecoder) now(req *Request) bool {
	b := d.callerBlock()
	if d.owned {
		b = d.m.now[:0]
	}
	start := len(b)
	b, ok := d.str(b)
	if !ok {
		return false
	}
	s := view.String(b[start:])
	sec, msg := timefmt.ParseRFC3339(s)
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

// name reads vector_metric or rerank_scale (field f). A name the gate
// knows becomes its constant, so the Request keeps no string of the
// request's, and "" is the default, as absent; any other string is given
// up on, and the tree decoder keeps it for the engine to refuse with the
// error naming the values.
func (d *directDecoder) name(req *Request, f int) bool {
	b, ok := d.str(d.m.junk[:0])
	d.m.junk = b
	if !ok {
		return false
	}
	s := view.String(b)
	if s == "" {
		return true // the default, as absent
	}
	if f == fVectorMetric {
		req.VectorMetric, ok = wire.ParseVectorMetric(s)
	} else {
		req.RerankScale, ok = wire.ParseRerankScale(s)
	}
	return ok
}

func (d *directDecoder) results(req *Request) bool {
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
			d.values++
			if len(lists) >= d.lim.MaxQueries {
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
func (d *directDecoder) chunkList(li, level int) ([]Chunk, bool) {
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
			d.values++
			if len(cs) >= d.lim.MaxChunks {
				return nil, false
			}
			// chunk writes every field, so a reused element is not
			// cleared first: Chunk{} is a memory.fill, which wazero runs
			// as one memmove call per power of two of its 152 bytes.
			n := len(cs)
			if n < cap(cs) {
				cs = cs[:n+1]
			} else {
				cs = append(cs, Chunk{})
			}
			if !d.chunk(&cs[n], n, level+1) {
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

// Caller-owned strings go into blocks of about callerBlockSize bytes,
// appended to and never rewritten, the strings viewing them: a few
// allocations per request instead of one per chunk, and still small blocks,
// because under TinyGo marking a pointer walks to its block's end
// (Memory). A block that overflows mid-string is reallocated by
// append: strings made before view the old array, which stays as it was.
const (
	callerBlockSize = 8 << 10
	callerBlockRoom = 2 << 10 // start a new block when less than this is left
)

// callerBlock returns the block the next caller-owned strings go to.
func (d *directDecoder) callerBlock() []byte {
	if cap(d.m.tmp)-len(d.m.tmp) < callerBlockRoom {
		d.m.tmp = make([]byte, 0, callerBlockSize)
	}
	return d.m.tmp
}

// seenScoresSet is the bit after a chunk's fields' own (1 << (code -
// firstChunkField)): scores was an object (not null), so c.Scores is
// written.
const seenScoresSet = 1 << (lastChunkField - firstChunkField + 1)

// chunk reads chunk i of its list at nesting level. Its strings are
// unescaped into one buffer: the engine's block for this chunk, or the
// caller-owned Request's current block (callerBlock).
//
// It writes every field of c, from locals, once at the end: c may hold
// the previous request's chunk (chunkList does not clear it), and clearing
// a struct or an array is a memory.fill, which costs wazero a memmove call
// per power of two of its size (a tenth of a 20-chunk decode in the module
// was such fills).
func (d *directDecoder) chunk(c *Chunk, i, level int) bool {
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
	// Where each string lies in b (locals, not an array: see above).
	var idA, idB, docA, docB, titleA, titleB, textA, textB, updA, updB int
	rawAt, rawEnd := 0, 0 // the text's JSON in src, when it is as the encoder writes it
	var (
		trust, temp                          float64
		hasTrust, hasTemp, untrusted, hasUpd bool
		updSec                               int64
		emb                                  []float64
	)
	hasID := false
	seen := 0
	if !d.next('}') {
		for {
			f := d.field()
			d.values++
			if f < firstChunkField || f > lastChunkField {
				return false
			}
			bit, sf := 1<<(f-firstChunkField), -1
			var ok bool
			switch f {
			case fID:
				sf = 0
			case fDocID:
				sf = 1
			case fTitle:
				sf = 2
			case fText:
				sf = 3
			case fUpdatedAt:
				sf = 4
			case fScores:
				if !d.isNull() {
					if !d.scores(&c.Scores, level+1) {
						return false
					}
					seen |= seenScoresSet
				}
			case fTrust:
				if !d.isNull() {
					if trust, ok = d.number(); !ok || trust < 0 || trust > 1 {
						return false
					}
					hasTrust = true
				}
			case fUntrusted:
				if !d.isNull() {
					if untrusted, ok = d.boolean(); !ok {
						return false
					}
				}
			case fEmbedding:
				if !d.isNull() {
					if emb, ok = d.floats(level + 1); !ok {
						return false
					}
				}
			case fTemperature:
				if !d.isNull() {
					if temp, ok = d.number(); !ok {
						return false
					}
					hasTemp = true
				}
			case fMetadata:
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
			if sf >= 0 && !d.isNull() {
				start := len(b)
				if b, ok = d.str(b); !ok {
					return false
				}
				end := len(b)
				switch sf {
				case 0:
					if end == start {
						return false // an empty id
					}
					idA, idB = start, end
					hasID = true
				case 1:
					docA, docB = start, end
				case 2:
					titleA, titleB = start, end
				case 3:
					textA, textB = start, end
					n := end - start
					d.total += n
					if n > d.lim.MaxChunkBytes || d.total > d.lim.MaxTotalBytes {
						return false
					}
					if d.owned && d.asIs {
						rawAt, rawEnd = d.sq+1, d.pos-1
					}
				case 4:
					updA, updB = start, end
					sec, msg := timefmt.ParseRFC3339(view.String(b[start:]))
					if msg != "" {
						return false
					}
					updSec, hasUpd = sec, true
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
		// "c" and the chunk's number, as the tree decoder names it
		// (strconv.AppendInt was a 64-bit division loop under TinyGo).
		// Written in place: a local array appended from may be put on
		// TinyGo's heap.
		n := uint32(i + 1)
		w := 1
		for t := n; t >= 10; t /= 10 {
			w++
		}
		if cap(b)-len(b) < w+1 {
			b = growBytes(b, w+1)
		}
		start := len(b)
		b = b[:start+1+w]
		b[start] = 'c'
		for k := start + w; k > start; k-- {
			b[k] = byte('0' + n%10)
			n /= 10
		}
		idA, idB = start, len(b)
	}
	if d.owned {
		d.m.blocks[d.k-1] = b
	} else {
		d.m.tmp = b
	}
	if seen&seenScoresSet == 0 {
		c.Scores = Scores{} // rare: a chunk without scores
	}
	all := view.String(b)
	c.ID = all[idA:idB]
	c.DocID = all[docA:docB]
	c.Title = all[titleA:titleB]
	c.Text = all[textA:textB]
	c.UpdatedAt = all[updA:updB]
	c.UpdatedSec, c.HasUpdated = updSec, hasUpd
	c.Trust, c.HasTrust = trust, hasTrust
	c.Untrusted = untrusted
	c.Embedding = emb
	c.Temperature, c.HasTemperature = temp, hasTemp
	if rawEnd > rawAt {
		// Not append's runtime call when there is room (TinyGo, -opt=z).
		n := len(d.m.asIs)
		if n < cap(d.m.asIs) {
			d.m.asIs = d.m.asIs[:n+1]
		} else {
			d.m.asIs = append(d.m.asIs, asIsText{})
		}
		d.m.asIs[n] = asIsText{p: uintptr(unsafe.Pointer(unsafe.StringData(c.Text))), n: len(c.Text), at: rawAt, end: rawEnd}
	}
	return true
}

// scores reads a chunk's scores with the tree decoder's rules (request.go,
// scores: vector and rerank as given, the others >= 0), and writes every
// field of s (see chunk).
func (d *directDecoder) scores(s *Scores, level int) bool {
	if !d.open('{', level) {
		return false
	}
	var vector, bm25, rerank, rrf, boosted, graph, sparse float64
	var hasVector, hasBM25, hasRerank, hasRRF, hasBoosted, hasGraph, hasSparse bool
	if !d.next('}') {
		seen := 0
		for {
			f := d.field()
			d.values++
			if f < firstScoreField || f > lastScoreField {
				return false
			}
			bit := 1 << (f - firstScoreField)
			if seen&bit != 0 {
				return false
			}
			seen |= bit
			if !d.isNull() {
				v, end, ok := number.Parse(d.src, d.pos)
				d.pos = end
				if !ok {
					return false
				}
				switch f {
				case fVector:
					vector, hasVector = v, true
				case fRerank:
					rerank, hasRerank = v, true
				default:
					if v < 0 {
						return false
					}
					switch f {
					case fBM25:
						bm25, hasBM25 = v, true
					case fRRF:
						rrf, hasRRF = v, true
					case fBoosted:
						boosted, hasBoosted = v, true
					case fSparse:
						sparse, hasSparse = v, true
					default:
						graph, hasGraph = v, true
					}
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
	s.Vector, s.BM25, s.Rerank, s.RRF, s.Boosted, s.Graph, s.Sparse = vector, bm25, rerank, rrf, boosted, graph, sparse
	s.HasVector, s.HasBM25, s.HasRerank, s.HasRRF, s.HasBoosted, s.HasGraph, s.HasSparse = hasVector, hasBM25, hasRerank, hasRRF, hasBoosted, hasGraph, hasSparse
	return true
}

// duplicateIDs reports whether two chunks of the list may share an id:
// two ids hashing alike (jsonx.HashKey) make the decoder give up, equal or
// not, and the tree decoder decides (jsonx.Repeats). The hashes go into an
// open-addressing table of chunk indexes (a small one on the stack, a
// bigger one reused by the engine), and a probe compares hashes, never
// ids: ids built to share a slot cost one integer comparison per probe,
// where comparing 3.9 KiB ids along the probe sequence was quadratic in
// bytes.
func (d *directDecoder) duplicateIDs(cs []Chunk) bool {
	if len(cs) < 2 {
		return false
	}
	if len(cs) <= 32 && !d.owned {
		var small [64]int32
		var hs [32]uint64
		return sharedID(cs, small[:], hs[:len(cs)])
	}
	// The engine's tables (no stack arrays to clear: under TinyGo each
	// clear is a memory.fill, a call in wazero).
	size := 64
	if len(cs) > 32 {
		size = 128
	}
	for size < 2*len(cs) {
		size *= 2
	}
	var t []int32
	var hs []uint64
	if d.owned {
		t, hs = d.m.ids, d.m.idHash
	}
	if cap(t) < size {
		t = make([]int32, size)
	}
	if cap(hs) < len(cs) {
		hs = make([]uint64, len(cs))
	}
	if d.owned {
		d.m.ids, d.m.idHash = t, hs
	}
	return sharedID(cs, t[:size], hs[:len(cs)])
}

// sharedID is duplicateIDs over table t, a power of two at least twice
// len(cs) long, with hs (len(cs) long) for the ids' hashes.
func sharedID(cs []Chunk, t []int32, hs []uint64) bool {
	for i := range t {
		t[i] = -1
	}
	mask := uint64(len(t) - 1)
	for i := range cs {
		h := jsonx.HashKey(cs[i].ID)
		hs[i] = h
		for p := h & mask; ; p = (p + 1) & mask {
			j := t[p]
			if j < 0 {
				t[p] = int32(i)
				break
			}
			if hs[j] == h {
				return true
			}
		}
	}
	return false
}
