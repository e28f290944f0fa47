package gate

import (
	"math/bits"
	"unicode"
	"unicode/utf8"

	"github.com/ctxgate/ctxgate/gate/internal/swar"
)

// Tokens are runs of letters, digits and combining marks of any script,
// lower-cased, with everything else (punctuation, symbols, spaces) acting as
// a separator. Runs of CJK characters (Han, Hiragana, Katakana, Hangul)
// produce overlapping character bigrams instead, because those scripts do not
// put spaces between words; a lone CJK character is a unigram. A token is
// identified by a 64-bit hash of its folded UTF-8 bytes, so matching terms
// never allocates a string.
//
// The hash takes the folded bytes eight at a time as a little-endian word,
// mixes each full word into the state with one multiply, and finishes with
// the last partial word, its length and one more multiply. It replaced
// FNV-1a (one multiply per byte) because a block-wise hash lets ASCII text be
// handled eight bytes at a time (scanText's block path; before it, a block
// tokenizer), which the byte-wise hash could not.
// Hashes never reach the output: only equality matters (query terms, stop
// lists), and every side hashes through the same state (hashByte, hashRune,
// hashWord agree byte for byte; TestTokenizeMatchesRef,
// TestScanTextMatchesRef).

const (
	hashMul  = 0x9E3779B97F4A7C15
	hashSeed = 0x243F6A8885A308D3
)

// hashBlock mixes one full eight-byte word into the state.
func hashBlock(h, word uint64) uint64 {
	h = (h ^ word) * hashMul
	return h ^ h>>32
}

// hashSum finishes a hash: acc holds the last sh/8 bytes (sh < 64, so its top
// byte is free for the count).
func hashSum(h, acc uint64, sh uint) uint64 {
	x := (h ^ acc ^ uint64(sh+8)<<56) * hashMul
	return x ^ x>>29
}

// hashByte adds one byte to the state (h, acc, sh).
func hashByte(h, acc uint64, sh uint, b byte) (uint64, uint64, uint) {
	acc |= uint64(b) << sh
	sh += 8
	if sh == 64 {
		return hashBlock(h, acc), 0, 0
	}
	return h, acc, sh
}

// token is one term: its hash, its length in runes, and whether it is CJK.
type token struct {
	hash  uint64
	runes int
	cjk   bool
}

func isCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	if r <= unicode.MaxLatin1 {
		return latin1Fold[r] != 0
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	if r <= unicode.MaxLatin1 && latin1Fold[r] != 0 {
		return rune(latin1Fold[r])
	}
	return unicode.ToLower(r)
}

// latin1Fold is isWordRune and foldRune for U+0080..U+00FF: the rune
// lower-cased when it is a word rune, else 0. Web text carries these
// often (°, ·, é, and the mojibake of curly quotes: "â\u0080\u0099"),
// and unicode.IsMark and unicode.ToLower have no Latin-1 fast path: a
// table search per rune, which in the TinyGo module was a tenth of
// scanning DL19 chunks. Every Latin-1 letter lower-cases within Latin-1
// (TestLatin1Fold).
var latin1Fold = func() (t [unicode.MaxLatin1 + 1]byte) {
	for r := rune(utf8.RuneSelf); r <= unicode.MaxLatin1; r++ {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) {
			t[r] = byte(unicode.ToLower(r))
		}
	}
	return t
}()

// hashRune adds the UTF-8 bytes of r to the state (h, acc, sh).
func hashRune(h, acc uint64, sh uint, r rune) (uint64, uint64, uint) {
	var b [utf8.UTFMax]byte
	n := utf8.EncodeRune(b[:], r)
	for i := 0; i < n; i++ {
		h, acc, sh = hashByte(h, acc, sh, b[i])
	}
	return h, acc, sh
}

// hashRunes is the hash of a CJK unigram (prev < 0) or bigram.
func hashRunes(prev, r rune) uint64 {
	h, acc, sh := uint64(hashSeed), uint64(0), uint(0)
	if prev >= 0 {
		h, acc, sh = hashRune(h, acc, sh, prev)
	}
	h, acc, sh = hashRune(h, acc, sh, r)
	return hashSum(h, acc, sh)
}

// wordByte maps an ASCII byte to itself lower-cased when it is a letter or a
// digit and to 0 when it separates words; every byte >= 0x80 maps to 0x80
// (a multi-byte rune: decode it). One table load replaces the range tests,
// so the common case, an ASCII word, runs in a tight loop of its own.
var wordByte = func() (t [256]byte) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 0x80:
			t[c] = 0x80
		case c >= 'A' && c <= 'Z':
			t[c] = byte(c + 'a' - 'A')
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			t[c] = byte(c)
		}
	}
	return t
}()

// tokenSink collects the tokens of a text and, with keep, their folded
// text: the query's, whose missing terms are named by it (ends records each
// token's end in text).
type tokenSink struct {
	toks []token
	text []byte
	ends []int
	keep bool
}

// add appends one token; its folded text, if kept, was appended just
// before.
func (k *tokenSink) add(t token) {
	k.toks = append(k.toks, t)
	if k.keep {
		k.ends = append(k.ends, len(k.text))
	}
}

// tokenize appends the tokens of s to dst and returns them with the number
// of runes in s (as utf8.RuneCountInString counts them: sufficiency's
// density needs it, and this saves a second pass over the text). If text
// is non-nil, the folded bytes of each token are appended to *text too,
// with ends recording each token's end offset. It is scanWords with a
// sink, which the query's analysis calls with the engine's sink.
func tokenize(s string, dst []token, text *[]byte, ends *[]int) ([]token, int) {
	k := tokenSink{toks: dst}
	if text != nil {
		k.text, k.ends, k.keep = *text, *ends, true
	}
	_, chars := (*queryInfo)(nil).scanWords(s, 0, nil, &k)
	if text != nil {
		*text, *ends = k.text, k.ends
	}
	return k.toks, chars
}

// hashSet is a small open-addressing set of token hashes, reused between
// calls (no map: cheaper to reset and its iteration never reaches output).
type hashSet struct {
	slots []uint64 // 0 marks an empty slot; hash 0 is stored as 1
	count int
}

func (s *hashSet) reset(expect int) {
	s.slots = emptyTable(s.slots, 16, expect)
	s.count = 0
}

func (s *hashSet) add(h uint64) bool {
	if h == 0 {
		h = 1
	}
	if len(s.slots) == 0 || (s.count+1)*2 > len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			s.slots[i] = h
			s.count++
			return true
		case h:
			return false
		}
	}
}

func (s *hashSet) has(h uint64) bool {
	if h == 0 {
		h = 1
	}
	if len(s.slots) == 0 {
		return false
	}
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			return false
		case h:
			return true
		}
	}
}

func (s *hashSet) grow() {
	old := s.slots
	size := 16
	if len(old) > 0 {
		size = len(old) * 2
	}
	s.slots = make([]uint64, size)
	s.count = 0
	for _, h := range old {
		if h != 0 {
			s.add(h)
		}
	}
}

// hashString hashes an already-folded word the way tokenize does.
func hashString(w string) uint64 {
	h, acc, sh := uint64(hashSeed), uint64(0), uint(0)
	for i := 0; i < len(w); i++ {
		h, acc, sh = hashByte(h, acc, sh, w[i])
	}
	return hashSum(h, acc, sh)
}

// termHits counts what one chunk text holds of the query (queryInfo.hit).
type termHits struct {
	qualityHits, coverageHits, answerHits int
}

// scanText scans a chunk's text for the query-term lookups prepare needs:
// it returns the text's token count and rune count and adds the distinct
// query terms it holds to *hits (q.seen stamps them with stamp), storing no
// token. A chunk needs counts, not tokens: appending each token and reading
// the slice back in a second loop cost a store per token natively and,
// under TinyGo, a runtime call per append.
func (q *queryInfo) scanText(s string, stamp int, hits *termHits) (words, chars int) {
	return q.scanWords(s, stamp, hits, nil)
}

// scanWords is the one word loop: tokens are runs of letters, digits and
// marks (ASCII words hashed by an inner loop that leaves only at the
// word's end, two-byte Latin-1 runes folded from a table, CJK runs as
// bigrams). Each token goes to sink when there is one (tokenize, the
// query), else to the query-term lookup (q.test). Without a sink, ASCII
// text is taken sixteen bytes a step by the block path (scanASCII), whose
// tokens are exactly the byte loop's (TestScanTextMatchesRef,
// FuzzScanText). The word state (h, n) stays in local variables: a closure
// capturing them keeps them in memory, which under TinyGo/Wasm made this
// loop several times slower.
func (q *queryInfo) scanWords(s string, stamp int, hits *termHits, sink *tokenSink) (words, chars int) {
	if sink == nil {
		q.live, q.liveN, q.liveAt, q.liveMask = q.first, q.tails, q.tails, q.firstMask
	}
	h, acc, sh := uint64(hashSeed), uint64(0), uint(0) // the current word's hash state
	n := 0                                             // runes in the current word
	var prevCJK rune = -1
	cjkRun := 0
	extra := 0 // bytes beyond the first of each multi-byte rune
	stop := 0  // where the blocks last stopped: no going back before it
	for i := 0; i < len(s); {
		if sink == nil && n == 0 && cjkRun == 0 && i >= stop && i+8 <= len(s) {
			i, stop, words = q.scanASCII(s, i, words, stamp, hits)
			if i == len(s) {
				break
			}
		}
		c := wordByte[s[i]]
		if c == 0 {
			i++
			if cjkRun > 0 {
				words += q.flushCJK(prevCJK, cjkRun, stamp, hits, sink)
				cjkRun, prevCJK = 0, -1
			}
			if n > 0 {
				q.word(token{hash: hashSum(h, acc, sh), runes: n}, stamp, hits, sink)
				words++
				h, acc, sh, n = hashSeed, 0, 0, 0
			}
			continue
		}
		if c < 0x80 {
			if cjkRun > 0 {
				words += q.flushCJK(prevCJK, cjkRun, stamp, hits, sink)
				cjkRun, prevCJK = 0, -1
			}
			start := i
			for {
				acc |= uint64(c) << sh
				sh += 8
				if sh == 64 {
					h, acc, sh = hashBlock(h, acc), 0, 0
				}
				i++
				if i == len(s) {
					break
				}
				c = wordByte[s[i]]
				if c == 0 || c == 0x80 {
					break
				}
			}
			n += i - start
			if sink != nil && sink.keep {
				// One append per run, folded in place: an append per byte
				// was a runtime call per byte of the query under TinyGo.
				t := append(sink.text, s[start:i]...)
				for k := len(t) - (i - start); k < len(t); k++ {
					t[k] = wordByte[t[k]]
				}
				sink.text = t
			}
			continue
		}
		if b := s[i]; b&0xFE == 0xC2 && i+1 < len(s) && s[i+1]&0xC0 == 0x80 {
			// A Latin-1 rune, as web text has many (see latin1Fold): its
			// two bytes decoded, classified and folded here, not through
			// the general path's four calls. It is never CJK.
			f := latin1Fold[rune(b&0x1F)<<6|rune(s[i+1]&0x3F)]
			i += 2
			extra++
			if cjkRun > 0 {
				words += q.flushCJK(prevCJK, cjkRun, stamp, hits, sink)
				cjkRun, prevCJK = 0, -1
			}
			if f != 0 {
				h, acc, sh = hashByte(h, acc, sh, 0xC0|f>>6)
				h, acc, sh = hashByte(h, acc, sh, 0x80|f&0x3F)
				n++
				if sink != nil && sink.keep {
					sink.text = append(sink.text, 0xC0|f>>6, 0x80|f&0x3F)
				}
				continue
			}
			if n > 0 {
				q.word(token{hash: hashSum(h, acc, sh), runes: n}, stamp, hits, sink)
				words++
				h, acc, sh, n = hashSeed, 0, 0, 0
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		extra += size - 1
		if isCJK(r) {
			if n > 0 {
				q.word(token{hash: hashSum(h, acc, sh), runes: n}, stamp, hits, sink)
				words++
				h, acc, sh, n = hashSeed, 0, 0, 0
			}
			if prevCJK >= 0 {
				if sink != nil && sink.keep {
					sink.text = utf8.AppendRune(utf8.AppendRune(sink.text, prevCJK), r)
				}
				q.word(token{hash: hashRunes(prevCJK, r), runes: 2, cjk: true}, stamp, hits, sink)
				words++
			}
			prevCJK = r
			cjkRun++
			continue
		}
		if cjkRun > 0 {
			words += q.flushCJK(prevCJK, cjkRun, stamp, hits, sink)
			cjkRun, prevCJK = 0, -1
		}
		if isWordRune(r) {
			f := foldRune(r)
			h, acc, sh = hashRune(h, acc, sh, f)
			n++
			if sink != nil && sink.keep {
				sink.text = utf8.AppendRune(sink.text, f)
			}
			continue
		}
		if n > 0 {
			q.word(token{hash: hashSum(h, acc, sh), runes: n}, stamp, hits, sink)
			words++
			h, acc, sh, n = hashSeed, 0, 0, 0
		}
	}
	if n > 0 {
		q.word(token{hash: hashSum(h, acc, sh), runes: n}, stamp, hits, sink)
		words++
	}
	if cjkRun > 0 {
		words += q.flushCJK(prevCJK, cjkRun, stamp, hits, sink)
	}
	return words, len(s) - extra
}

// flushCJK ends a CJK run: a lone character is a unigram token (returns
// 1; a longer run has already produced its bigrams).
func (q *queryInfo) flushCJK(prev rune, run int, stamp int, hits *termHits, sink *tokenSink) int {
	if run != 1 {
		return 0
	}
	if sink != nil && sink.keep {
		sink.text = utf8.AppendRune(sink.text, prev)
	}
	q.word(token{hash: hashRunes(-1, prev), runes: 1, cjk: true}, stamp, hits, sink)
	return 1
}

// word hands one token to the sink, or to the query-term lookup.
func (q *queryInfo) word(t token, stamp int, hits *termHits, sink *tokenSink) {
	if sink != nil {
		sink.add(t)
		return
	}
	q.test(t.hash, stamp, hits)
}

// test looks up one token's hash among the query terms, bloom first.
func (q *queryInfo) test(h uint64, stamp int, hits *termHits) {
	if q.bloom&(1<<(h>>58)) != 0 {
		q.hit(h, stamp, hits)
	}
}

// hit records a token that passed the bloom test, once per term and chunk.
func (q *queryInfo) hit(h uint64, stamp int, hits *termHits) {
	j := q.lookup(h)
	if j < 0 || j >= len(q.seen) || q.seen[j] == stamp {
		return
	}
	q.seen[j] = stamp
	q.found[j] = true
	t := &q.terms[j]
	if t.inQuality {
		hits.qualityHits++
	}
	if t.inCoverage {
		hits.coverageHits++
	}
	if t.inAnswer {
		hits.answerHits++
	}
	if t.tail != 0 {
		// Exact for the queries of a few terms every request has; for a
		// long one, at each halving (queryInfo.tails).
		q.liveMask &^= 1 << (j & 63)
		if q.liveN--; q.tails <= 32 || q.liveN <= q.liveAt/2 {
			q.live, q.liveAt = q.liveFilter(stamp), q.liveN
			q.refilters++
		}
	}
}

// scanASCII walks s from i in eight-byte blocks of ASCII text with no word
// open at i, counting words and finding the query's terms among them.
// Unlike the word-by-word walk it replaced (a block tokenizer) it never
// moves by a word: every block is classified once, and a short loop visits
// the words ending in it, each seen through the eight bytes before its end
// (this block and the one before). That trades the two hard-to-predict
// branches per word of a word-by-word walk (is the next word in this block?
// does the next block start with one?) for the loop's exit. Words are not hashed: a block's
// word endings are first compared with the live terms' last bytes
// (q.live, scanFilter), the few that match are tested against the live
// terms' tail bloom with their tailKey, one multiply, and only those that
// pass (mostly true hits) are hashed and looked up, by scanPassed, outside
// the loop.
//
// It stops at a block holding a byte >= 0x80 or fewer than eight bytes from
// the end. A word still open there is handed back unfinished and uncounted:
// resume is its start (the byte loop tokenizes it again, whole); else resume
// is where the blocks stopped. The byte loop must not come back here before
// stop: past the stopping block's last byte >= 0x80, or where the blocks
// stopped when that was the end.
func (q *queryInfo) scanASCII(s string, from, words, stamp int, hits *termHits) (resume, stop, words2 int) {
	i := from
	// Two calls of scanBlocks, not one in a loop: a function called once
	// is inlined into its caller by the optimizers, and there its loop's
	// values compete for registers with all of scanText's.
	var before, prev, passed uint64
	i, before, prev, passed, words = scanBlocks(s, i, prev, q.live, words)
	for passed != 0 {
		q.scanPassed(s, from, i-8, passed, before, prev, stamp, hits)
		i, before, prev, passed, words = scanBlocks(s, i, prev, q.live, words)
	}
	stop = i
	if i >= 0 && i+8 <= len(s) {
		// The blocks stopped at a byte >= 0x80. The byte loop takes the
		// block up to its last such byte: coming back sooner, the blocks
		// would stop at the same byte again, a wasted call per word before
		// it (English text has a few: curly quotes, degree signs).
		stop = i + 8 - bits.LeadingZeros64(swar.Load64(s, i)&swar.Msb)>>3
	}
	if prev>>63 != 0 {
		// A word is open: back to its start, which the last block's word
		// bits give unless the word fills it.
		return wordStart(s, from, i, prev), stop, words
	}
	return i, stop, words
}

// wordStart is the start of the ASCII word ending at end, no sooner than
// from; w holds the eight bytes before end as scanBlocks keeps them (the
// top bit set in each word byte, none before from), so only a word of
// eight bytes or more is walked back byte by byte.
func wordStart(s string, from, end int, w uint64) int {
	start := end - bits.LeadingZeros64(^w&swar.Msb)>>3
	if start == end-8 {
		for start > from && isASCIIWordByte(s[start-1]) {
			start--
		}
	}
	return start
}

// scanBlocks is scanASCII's loop over blocks. A block is kept as z: its
// bytes lower-cased where they are letters, with the top bit set in each
// word byte (ASCII leaves that bit free), so that one shift moves a word's
// bytes and its word mask together. It returns after the first block with
// a word that passed the filter (passed has bit 8k set for the word ending
// k bytes into that block, the one before i), or where the blocks stop
// (passed is 0). prev is the last block done, before the one before it.
//
// It is written for wazero's code from TinyGo at -opt=z, where the cost is
// the instruction count: blocks go two at a time (one loop test, one
// bounds check and one memory check per sixteen bytes), each range test
// is two additions and an exclusive or ((c+0x80-lo) ^ (c+0x7F-hi) has the
// top bit set exactly for lo <= c <= hi, with no carry out of a byte for
// c < 0x80), and the last-byte comparison is of bytes with the top bit
// clear (c + 0x7F carries into the top bit exactly when c != 0, and never
// out of the byte).
func scanBlocks(s string, i int, prev uint64, f scanFilter, words int) (i2 int, before, prev2, passed uint64, words2 int) {
	last1, last2, all := f.last1, f.last2, f.all
	if f.tail == 0 {
		// No ASCII term left to look for (the query has none, or this
		// chunk has shown them all, which in DL19 a fifth of the blocks
		// come after): the words are only counted.
		for i >= 0 && i+16 <= len(s) {
			blk := s[i : i+16]
			x1, x2 := swar.Load64(blk, 0), swar.Load64(blk, 8)
			if (x1|x2)&swar.Msb != 0 {
				break
			}
			y1, y2 := x1|0x20*swar.Lsb, x2|0x20*swar.Lsb
			m1 := ((y1 + 0x1F*swar.Lsb) ^ (y1 + 0x05*swar.Lsb) | ((x1 + 0x50*swar.Lsb) ^ (x1 + 0x46*swar.Lsb))) & swar.Msb
			m2 := ((y2 + 0x1F*swar.Lsb) ^ (y2 + 0x05*swar.Lsb) | ((x2 + 0x50*swar.Lsb) ^ (x2 + 0x46*swar.Lsb))) & swar.Msb
			ends1 := (m1<<8 | prev>>56&0x80) &^ m1
			ends2 := (m2<<8 | m1>>56) &^ m2
			words += bits.OnesCount64(ends1 | ends2>>1)
			prev = y2 | m2
			i += 16
		}
	}
	for i >= 0 && i+16 <= len(s) {
		blk := s[i : i+16]
		x1, x2 := swar.Load64(blk, 0), swar.Load64(blk, 8)
		if (x1|x2)&swar.Msb != 0 {
			break
		}
		y1, y2 := x1|0x20*swar.Lsb, x2|0x20*swar.Lsb
		m1 := ((y1 + 0x1F*swar.Lsb) ^ (y1 + 0x05*swar.Lsb) | ((x1 + 0x50*swar.Lsb) ^ (x1 + 0x46*swar.Lsb))) & swar.Msb
		m2 := ((y2 + 0x1F*swar.Lsb) ^ (y2 + 0x05*swar.Lsb) | ((x2 + 0x50*swar.Lsb) ^ (x2 + 0x46*swar.Lsb))) & swar.Msb
		z1, z2 := y1|m1, y2|m2
		ends1 := (m1<<8 | prev>>56&0x80) &^ m1
		ends2 := (m2<<8 | m1>>56) &^ m2
		v1 := (z1<<8 | prev>>56) & swar.Low7
		v2 := (z2<<8 | z1>>56) & swar.Low7
		c1 := ends1 & (^(((v1 ^ last1) + swar.Low7) & ((v1 ^ last2) + swar.Low7)) | all)
		c2 := ends2 & (^(((v2 ^ last1) + swar.Low7) & ((v2 ^ last2) + swar.Low7)) | all)
		if c1|c2 != 0 {
			// tailPassed written out for each block: as a call, it was
			// a sixth of the scan in the module.
			var p uint64
			for c := c1; c != 0; c &= c - 1 {
				k := uint(bits.TrailingZeros64(c)) & 56
				w := prev>>k | z1<<((56-k)&56)<<8
				key := w >> (uint(64-bits.LeadingZeros64(^w&swar.Msb)) & 63)
				h := key * hashMul
				if b := uint64(1)<<(h>>58) | uint64(1)<<(h>>52&63); f.tail&b == b {
					p |= 1 << k
				}
			}
			if p != 0 {
				return i + 8, prev, z1, p, words + bits.OnesCount64(ends1)
			}
			for c := c2; c != 0; c &= c - 1 {
				k := uint(bits.TrailingZeros64(c)) & 56
				w := z1>>k | z2<<((56-k)&56)<<8
				key := w >> (uint(64-bits.LeadingZeros64(^w&swar.Msb)) & 63)
				h := key * hashMul
				if b := uint64(1)<<(h>>58) | uint64(1)<<(h>>52&63); f.tail&b == b {
					p |= 1 << k
				}
			}
			if p != 0 {
				return i + 16, z1, z2, p, words + bits.OnesCount64(ends1|ends2>>1)
			}
		}
		words += bits.OnesCount64(ends1 | ends2>>1)
		prev = z2
		i += 16
	}
	for i >= 0 && i+8 <= len(s) {
		x := swar.Load64(s, i)
		if x&swar.Msb != 0 {
			break
		}
		y := x | 0x20*swar.Lsb
		m := ((y + 0x1F*swar.Lsb) ^ (y + 0x05*swar.Lsb) | ((x + 0x50*swar.Lsb) ^ (x + 0x46*swar.Lsb))) & swar.Msb
		z := y | m
		ends := (m<<8 | prev>>56&0x80) &^ m
		words += bits.OnesCount64(ends)
		v := (z<<8 | prev>>56) & swar.Low7
		if c := ends & (^(((v ^ last1) + swar.Low7) & ((v ^ last2) + swar.Low7)) | all); c != 0 {
			if p := tailPassed(c, prev, z, f.tail); p != 0 {
				return i + 8, prev, z, p, words
			}
		}
		prev = z
		i += 8
	}
	return i, 0, prev, 0, words
}

// tailPassed returns the candidates of c (bit 8k+7: a word ends k bytes
// into block z, after block prev) whose tail keys pass the filter tail, at
// bit 8k. Each is seen through the eight bytes before its end.
func tailPassed(c, prev, z, tail uint64) (passed uint64) {
	for ; c != 0; c &= c - 1 {
		k := uint(bits.TrailingZeros64(c)) & 56 // the word ends at i+k/8
		// The eight bytes ending there: the word is the top ones, up
		// to the last byte without the word bit.
		w := prev>>k | z<<((56-k)&56)<<8
		key := w >> (uint(64-bits.LeadingZeros64(^w&swar.Msb)) & 63)
		p := key * hashMul
		if b := uint64(1)<<(p>>58) | uint64(1)<<(p>>52&63); tail&b == b {
			passed |= 1 << k
		}
	}
	return passed
}

func isASCIIWordByte(c byte) bool { return c < utf8.RuneSelf && wordByte[c] != 0 }

// scanPassed hashes the words ending in the block at i that passed
// scanASCII's filter (bit 8k of passed: the word ending at i+k) and looks
// them up. prev and z are the block before and this one, as scanBlocks
// keeps them.
func (q *queryInfo) scanPassed(s string, from, i int, passed, prev, z uint64, stamp int, hits *termHits) {
	for ; passed != 0; passed &= passed - 1 {
		k := uint(bits.TrailingZeros64(passed)) & 56
		end := i + int(k>>3)
		w := prev>>k | z<<((56-k)&56)<<8
		q.test(hashWord(s, wordStart(s, from, end, w), end, w&^swar.Msb), stamp, hits)
	}
}

// hashWord is the hash of the ASCII word s[start:end], whose last eight
// bytes, lower-cased, are win.
func hashWord(s string, start, end int, win uint64) uint64 {
	if l := uint(end - start); l < 8 {
		return hashSum(hashSeed, win>>(64-8*l), 8*l)
	}
	return hashLong(s, start, end, win)
}

// hashLong is the hash of the ASCII word s[start:end] (8 bytes or more),
// whose last eight bytes, lower-cased, are win.
func hashLong(s string, start, end int, win uint64) uint64 {
	h := uint64(hashSeed)
	j := start
	for ; j+8 <= end; j += 8 {
		h = hashBlock(h, swar.Load64(s, j)|0x20*swar.Lsb)
	}
	r := uint(end - j)
	if r == 0 {
		return hashSum(h, 0, 0)
	}
	return hashSum(h, win>>(64-8*r), 8*r)
}

// tailKey is the key scanASCII's filter uses for an ASCII word, folded: its
// last eight bytes (all of it when shorter), each with its top bit set, as
// a little-endian integer. A block scanner has those bytes in hand at the
// word's end, whatever the word's length, so it can turn most words away
// without hashing them.
func tailKey(w []byte) uint64 {
	if len(w) > 8 {
		w = w[len(w)-8:]
	}
	var k uint64
	for i := len(w) - 1; i >= 0; i-- {
		k = k<<8 | uint64(w[i]|0x80)
	}
	return k
}

// tailBits are the two filter bits of a tail key.
func tailBits(key uint64) uint64 {
	p := key * hashMul
	return 1<<(p>>58) | 1<<(p>>52&63)
}

func isASCII(w []byte) bool {
	for _, c := range w {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
