package gate

import (
	"unicode"
	"unicode/utf8"
)

// Tokens are runs of letters, digits and combining marks of any script,
// lower-cased, with everything else (punctuation, symbols, spaces) acting as
// a separator. Runs of CJK characters (Han, Hiragana, Katakana, Hangul)
// produce overlapping character bigrams instead, because those scripts do not
// put spaces between words; a lone CJK character is a unigram. A token is
// identified by the FNV-1a hash of its folded UTF-8 bytes, so matching terms
// never allocates a string.

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

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
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(r)
}

func hashRune(h uint64, r rune) uint64 {
	var b [utf8.UTFMax]byte
	n := utf8.EncodeRune(b[:], r)
	for i := 0; i < n; i++ {
		h ^= uint64(b[i])
		h *= fnvPrime
	}
	return h
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

// tokenize appends the tokens of s to dst and returns them with the number
// of runes in s (as utf8.RuneCountInString counts them: seed 002's density
// needs it, and this saves a second pass over the text). If text is non-nil,
// the folded bytes of each token are appended to *text too, with ends
// recording each token's end offset: the query uses that to name missing
// terms.
//
// The word state (h, n) stays in local variables and the flushes are plain
// functions, not closures: a closure capturing h and n keeps them in memory,
// which under TinyGo/Wasm made this loop several times slower
// (docs/performance.md). ASCII words are hashed by an inner loop that leaves
// only at the word's end, so the outer loop's branches run once per word,
// not once per byte.
func tokenize(s string, dst []token, text *[]byte, ends *[]int) ([]token, int) {
	h := uint64(fnvOffset)
	n := 0 // runes in the current word
	var prevCJK rune = -1
	cjkRun := 0
	extra := 0 // bytes beyond the first of each multi-byte rune
	for i := 0; i < len(s); {
		c := wordByte[s[i]]
		if c == 0 {
			// An ASCII separator ends a CJK run and a word.
			i++
			if cjkRun > 0 {
				dst = flushCJK(dst, prevCJK, cjkRun, text, ends)
				cjkRun, prevCJK = 0, -1
			}
			if n > 0 {
				dst = emitToken(dst, token{hash: h, runes: n}, text, ends)
				h, n = fnvOffset, 0
			}
			continue
		}
		if c < 0x80 {
			if cjkRun > 0 {
				dst = flushCJK(dst, prevCJK, cjkRun, text, ends)
				cjkRun, prevCJK = 0, -1
			}
			start := i
			for {
				h = (h ^ uint64(c)) * fnvPrime
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
			if text != nil {
				for k := start; k < i; k++ {
					*text = append(*text, wordByte[s[k]])
				}
			}
			// A separator or the end is handled above on the next turn;
			// a multi-byte rune may continue the word.
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		extra += size - 1
		if isCJK(r) {
			if n > 0 {
				dst = emitToken(dst, token{hash: h, runes: n}, text, ends)
				h, n = fnvOffset, 0
			}
			if prevCJK >= 0 {
				dst = emitToken(dst, token{hash: hashRune(hashRune(fnvOffset, prevCJK), r), runes: 2, cjk: true}, text, ends)
				if text != nil {
					*text = utf8.AppendRune(utf8.AppendRune(*text, prevCJK), r)
					(*ends)[len(*ends)-1] = len(*text)
				}
			}
			prevCJK = r
			cjkRun++
			continue
		}
		if cjkRun > 0 {
			dst = flushCJK(dst, prevCJK, cjkRun, text, ends)
			cjkRun, prevCJK = 0, -1
		}
		if isWordRune(r) {
			f := foldRune(r)
			h = hashRune(h, f)
			n++
			if text != nil {
				*text = utf8.AppendRune(*text, f)
			}
			continue
		}
		if n > 0 {
			dst = emitToken(dst, token{hash: h, runes: n}, text, ends)
			h, n = fnvOffset, 0
		}
	}
	if n > 0 {
		dst = emitToken(dst, token{hash: h, runes: n}, text, ends)
	}
	if cjkRun > 0 {
		dst = flushCJK(dst, prevCJK, cjkRun, text, ends)
	}
	return dst, len(s) - extra
}

// emitToken appends t, and its end offset in *text when the caller keeps
// the text.
func emitToken(dst []token, t token, text *[]byte, ends *[]int) []token {
	dst = append(dst, t)
	if ends != nil {
		*ends = append(*ends, len(*text))
	}
	return dst
}

// flushCJK ends a CJK run: a lone character is a unigram (a longer run has
// already produced its bigrams).
func flushCJK(dst []token, prev rune, run int, text *[]byte, ends *[]int) []token {
	if run != 1 {
		return dst
	}
	dst = emitToken(dst, token{hash: hashRune(fnvOffset, prev), runes: 1, cjk: true}, text, ends)
	if text != nil {
		*text = utf8.AppendRune(*text, prev)
		(*ends)[len(*ends)-1] = len(*text)
	}
	return dst
}

// hashSet is a small open-addressing set of token hashes, reused between
// calls (no map: cheaper to reset and its iteration never reaches output).
type hashSet struct {
	slots []uint64 // 0 marks an empty slot; hash 0 is stored as 1
	count int
}

func (s *hashSet) reset(expect int) {
	size := 16
	for size < expect*2 {
		size <<= 1
	}
	if cap(s.slots) >= size {
		s.slots = s.slots[:size]
		for i := range s.slots {
			s.slots[i] = 0
		}
	} else {
		s.slots = make([]uint64, size)
	}
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
	h := uint64(fnvOffset)
	for i := 0; i < len(w); i++ {
		h ^= uint64(w[i])
		h *= fnvPrime
	}
	return h
}
