package gate

import (
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctxgate/ctxgate/gate/internal/swar"
	"github.com/ctxgate/ctxgate/gate/internal/view"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// answerScan is the answer check's walk over the answer (check, answer.go).
// It records what it finds as offsets into the answer and indices into the
// offered tags, not strings: no allocation per sentence or citation, and
// nothing that points into the answer, whose buffer can be megabytes. Under
// TinyGo marking a pointer walks to the end of the object it points into
// (gate/jsonx/doc.go), so 60k sentence strings viewing a 3 MiB answer made
// every collection cost 60k walks of up to 3 MiB: 8-20 s for that answer in
// the module, against 40 ms natively. Strings are made once, at the end, in
// small blocks (strBlocks).
//
// The walk is linear in the answer's length, also for input built to be
// slow: a run of terminators not followed by a boundary is skipped whole
// (each terminator in it used to rescan the run), and tags are looked up
// in a table of the offered tags and deduplicated in a bitmap (they used to
// be compared with every offered tag and every unknown tag so far).
//
// Its memory is the engine's (answerMemory), reused from one answer to the
// next: a 3 MiB answer of 400,000 distinct unknown tags grew a hash table
// of them and its lists by doubling, 25 MB of garbage a call, and the
// second such call trapped the TinyGo module for want of room.
type answerScan struct {
	s       string   // the answer
	line    string   // the policy's refusal line
	minLine int      // the fewest bytes a sentence that is the refusal line has
	tags    []string // the offered tags
	m       *answerMemory

	// The output limit (max_decision_bytes; 0: none): size counts the
	// JSON of the unknown tags and, when uncitedOut, of the uncited
	// sentences; past the limit the walk stops, with over set.
	limit      int
	uncitedOut bool
	size       int
	over       bool
}

// answerMemory is what the answer check keeps between calls.
type answerMemory struct {
	// An open-addressing table of the offered tags' keys (tagKey), 0 when
	// empty: each entry is key<<32 | state, state being the index of an
	// offered tag, with tagCited once it was cited.
	table []uint64
	// The keys of the unknown tags cited so far: the first few listed,
	// the rest in a bitmap of every key (tagKey < 1<<23: 1 MiB, made at
	// the first answer that needs it), whose bits are cleared after each
	// answer.
	few  [16]uint32
	seen []uint64

	cited   []int // indices into tags, in first-cited order
	unknown []int // start, end in s of each unknown tag's first citation
	uncited []int // start, end in s of each uncited sentence, trimmed
}

const (
	tagCited   = 1 << 30
	tagIndex   = tagCited - 1
	tagKeyBits = 23 // tagKey's values are below 1<<tagKeyBits
)

// answerKeep is the most list entries answerMemory keeps between answers:
// 1 Mi (4 MiB in the TinyGo module), more than an answer within the
// default limits needs. Kept, they are allocated once (jsonx.Parser's
// rule, and why).
const answerKeep = 1 << 20

// trim drops lists over answerKeep that a large answer grew.
func (m *answerMemory) trim() {
	if cap(m.unknown)+cap(m.uncited) > answerKeep {
		m.unknown, m.uncited = nil, nil
	}
}

// newAnswerScan starts a walk of answer over m (reset).
func newAnswerScan(m *answerMemory, answer, line string, tags []string) answerScan {
	if c := cap(m.unknown) + cap(m.uncited); c > answerKeep && c > len(answer) {
		m.unknown, m.uncited = nil, nil
	}
	m.cited, m.unknown, m.uncited = m.cited[:0], m.unknown[:0], m.uncited[:0]
	return answerScan{s: answer, line: line, tags: tags, m: m}
}

func (sc *answerScan) run() {
	s := sc.s
	sc.minLine = refusalLen(sc.line)
	sentStart, sentCited := 0, false
	sc.offer()
	defer sc.forget()
	for i := nextAnswerStop(s, 0); i < len(s) && !sc.over; i = nextAnswerStop(s, i+1) {
		switch ch := s[i]; {
		case ch == '[':
			end := citationEnd(s, i)
			if end < 0 {
				continue
			}
			sc.cite(i, end)
			sentCited = true
			i = end - 1
		case ch == '\n':
			sc.endSentence(sentStart, i+1, sentCited)
			sentStart, sentCited = i+1, false
		case ch == '.' || ch == '!' || ch == '?':
			// A terminator ends a sentence only before whitespace, a
			// citation or the end ("3.5" and "e.g" stay whole). Citations
			// right after the terminator belong to this sentence.
			j := i + 1
			for j < len(s) && isTerminatorRun(s[j]) {
				j++
			}
			if j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '\n' && s[j] != '\r' && s[j] != '[' {
				// Every terminator up to j sees this same s[j], so none
				// ends a sentence: go on from j, not from i+1.
				i = j - 1
				continue
			}
			k := j
			for {
				m := k
				for m < len(s) && (s[m] == ' ' || s[m] == '\t') {
					m++
				}
				if m < len(s) && s[m] == '[' {
					if end := citationEnd(s, m); end > 0 {
						sc.cite(m, end)
						sentCited = true
						k = end
						continue
					}
				}
				break
			}
			sc.endSentence(sentStart, k, sentCited)
			sentStart, sentCited = k, false
			i = k - 1
		}
	}
	sc.endSentence(sentStart, len(s), sentCited)
}

// nextAnswerStop returns the index of the first byte at or after i that the
// walk acts on ('[', '\n', '.', '!', '?'), or len(s). It tests eight bytes
// at a time: the text between them is most of an answer. As in
// jsonx.PlainLen, the tests run on each byte's low seven bits, where adding
// 0x7f never carries into the next byte; bytes >= 0x80 never stop.
func nextAnswerStop(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		x := swar.Load64(s, i)
		y := x & swar.Low7
		other := ((y ^ '['*swar.Lsb) + swar.Low7) & ((y ^ '\n'*swar.Lsb) + swar.Low7) & ((y ^ '.'*swar.Lsb) + swar.Low7) &
			((y ^ '!'*swar.Lsb) + swar.Low7) & ((y ^ '?'*swar.Lsb) + swar.Low7)
		if m := ^(other | x) & swar.Msb; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '[' || c == '\n' || c == '.' || c == '!' || c == '?' {
			return i
		}
	}
	return len(s)
}

func isTerminatorRun(c byte) bool {
	return c == '.' || c == '!' || c == '?' || c == '"' || c == ')'
}

// endSentence records s[start:end], trimmed, when it is uncited, has a word
// and is not the refusal line.
func (sc *answerScan) endSentence(start, end int, cited bool) {
	if cited {
		return
	}
	start, end = trimSpaceSpan(sc.s, start, end)
	sent := sc.s[start:end]
	if hasWordRune(sent) && (len(sent) < sc.minLine || !isSoftRefusal(sent, sc.line)) {
		if sc.uncitedOut {
			sc.count(jsonx.StringLen(sent), len(sc.m.uncited) > 0)
		}
		sc.m.uncited = append(sc.m.uncited, start, end)
	}
}

// count adds n bytes (and a comma) to the output's size.
func (sc *answerScan) count(n int, comma bool) {
	if comma {
		n++
	}
	if sc.size += n; sc.limit > 0 && sc.size > sc.limit {
		sc.over = true
	}
}

// trimSpaceSpan is strings.TrimSpace(s[start:end]) as offsets into s.
func trimSpaceSpan(s string, start, end int) (int, int) {
	for start < end {
		if c := s[start]; c < utf8.RuneSelf {
			if !isASCIISpace(c) {
				break
			}
			start++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[start:end])
		if !unicode.IsSpace(r) {
			break
		}
		start += n
	}
	for end > start {
		if c := s[end-1]; c < utf8.RuneSelf {
			if !isASCIISpace(c) {
				break
			}
			end--
			continue
		}
		r, n := utf8.DecodeLastRuneInString(s[start:end])
		if !unicode.IsSpace(r) {
			break
		}
		end -= n
	}
	return start, end
}

func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// citationEnd returns the index after the citation "[S1]", "[S1, S2]" or
// "[S1,S2]" starting at s[i] == '[', or -1 when s[i:] is not one. A tag is S
// and one to six digits (leading zeros and S0 included: they are tags the
// prompt never offered).
func citationEnd(s string, i int) int {
	j := i + 1
	for {
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if j >= len(s) || s[j] != 'S' {
			return -1
		}
		k := j + 1
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k == j+1 || k-j > 7 {
			return -1
		}
		for k < len(s) && s[k] == ' ' {
			k++
		}
		if k < len(s) && s[k] == ']' {
			return k + 1
		}
		if k < len(s) && s[k] == ',' {
			j = k + 1
			continue
		}
		return -1
	}
}

// cite records the tags of the citation s[i:end], which citationEnd accepted.
func (sc *answerScan) cite(i, end int) {
	s := sc.s
	j := i + 1
	for j < end {
		for j < end && s[j] == ' ' {
			j++
		}
		if j >= end || s[j] != 'S' {
			return
		}
		k := j + 1
		for k < end && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		sc.tag(j, k)
		for k < end && s[k] == ' ' {
			k++
		}
		j = k + 1 // past ',' or the closing ']'
	}
}

// tagKey maps a tag "S" + 1-6 digits to a distinct nonzero key: the number
// of digits above the value, so "S01" and "S1" differ as strings do. ok is
// false for anything else (such an offered tag can never be cited).
func tagKey(t string) (key uint32, ok bool) {
	if len(t) < 2 || len(t) > 7 || t[0] != 'S' {
		return 0, false
	}
	var v uint32
	for i := 1; i < len(t); i++ {
		c := t[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint32(c-'0')
	}
	return uint32(len(t)-1)<<20 | v, true
}

// tag records the cited tag s[j:k].
func (sc *answerScan) tag(j, k int) {
	key, ok := tagKey(sc.s[j:k])
	if !ok {
		return // cite only passes what citationEnd accepted
	}
	m := sc.m
	if slot, e := sc.find(key); e != 0 {
		if st := uint32(e); st&tagCited == 0 {
			m.table[slot] = e | tagCited
			m.cited = append(m.cited, int(st&tagIndex))
		}
		return
	}
	if sc.seenUnknown(key) {
		return
	}
	sc.count(k-j+2, len(m.unknown) > 0)
	m.unknown = append(m.unknown, j, k)
}

// seenUnknown reports whether the unknown tag key was cited before, and
// records it.
func (sc *answerScan) seenUnknown(key uint32) bool {
	m := sc.m
	n := len(m.unknown) / 2
	if n < len(m.few) {
		for _, k := range m.few[:n] {
			if k == key {
				return true
			}
		}
		m.few[n] = key
		return false
	}
	if n == len(m.few) {
		if m.seen == nil {
			m.seen = make([]uint64, 1<<tagKeyBits/64)
		}
		for _, k := range m.few {
			m.seen[k>>6] |= 1 << (k & 63)
		}
	}
	w, bit := &m.seen[key>>6], uint64(1)<<(key&63)
	if *w&bit != 0 {
		return true
	}
	*w |= bit
	return false
}

// forget clears the bitmap bits this answer set, so the next starts empty
// without clearing the whole of it.
func (sc *answerScan) forget() {
	m := sc.m
	if m.seen == nil {
		return
	}
	// Not only past len(m.few) unknown tags: a repeat checked at exactly
	// len(m.few) has already moved the few into the bitmap.
	for i := 0; i+1 < len(m.unknown); i += 2 {
		if key, ok := tagKey(sc.s[m.unknown[i]:m.unknown[i+1]]); ok {
			m.seen[key>>6] &^= 1 << (key & 63)
		}
	}
}

// offer fills the table with the offered tags; the first of equal tags
// stands for them all. The table is at least four times their number, so
// it is never more than a quarter full.
func (sc *answerScan) offer() {
	size := 16
	for size < 4*len(sc.tags) {
		size *= 2
	}
	m := sc.m
	if cap(m.table) < size {
		m.table = make([]uint64, size)
	}
	m.table = m.table[:size]
	clear(m.table)
	for i, t := range sc.tags {
		if key, ok := tagKey(t); ok && i <= tagIndex {
			if slot, e := sc.find(key); e == 0 {
				m.table[slot] = uint64(key)<<32 | uint64(i)
			}
		}
	}
}

// find returns the slot holding key, or the empty slot where it would go,
// and that slot's entry.
func (sc *answerScan) find(key uint32) (int, uint64) {
	t := sc.m.table
	mask := len(t) - 1
	for h := int(uint64(key)*0x9e3779b97f4a7c15>>32) & mask; ; h = (h + 1) & mask {
		e := t[h]
		if e == 0 || uint32(e>>32) == key {
			return h, e
		}
	}
}

// strBlocks copies strings into blocks of a few KB, so that the strings a
// Validation keeps do not point into the answer (answerScan) and marking
// one walks at most a block. A string longer than a block's spare room gets
// its own allocation: one walk of its length, which it has anyway.
type strBlocks struct{ cur []byte }

const (
	strBlockSize = 8 << 10
	strBlockRoom = 1 << 10
)

func (b *strBlocks) clone(s string) string {
	if len(s) > strBlockRoom {
		return strings.Clone(s)
	}
	if cap(b.cur)-len(b.cur) < len(s) {
		b.cur = make([]byte, 0, strBlockSize)
	}
	start := len(b.cur)
	b.cur = append(b.cur, s...)
	return view.String(b.cur[start:])
}

// spans returns s[at[0]:at[1]], s[at[2]:at[3]], ... as copies; nil for none.
func (b *strBlocks) spans(s string, at []int) []string {
	if len(at) < 2 {
		return nil
	}
	out := make([]string, len(at)/2)
	for i := range out {
		out[i] = b.clone(s[at[2*i]:at[2*i+1]])
	}
	return out
}
