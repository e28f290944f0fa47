package gate

import (
	"math/bits"
	"unicode/utf8"
)

// tokenizeRef is the tokenizer as it was before the table-driven fast path
// (commit 12fd37d), kept as the reference the fast one must match token for
// token (TestTokenizeMatchesRef, FuzzTokenize). It hashes with FNV-1a, the
// hash of that time: the comparison is of token texts, and of each fast
// token's hash with hashString of its text.
func tokenizeRef(s string, dst []token, text *[]byte, ends *[]int) []token {
	h := uint64(fnvOffset)
	n := 0 // runes in the current word
	var prevCJK rune = -1
	cjkRun := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			// ASCII fast path: no decoding, no tables.
			i++
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			} else if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
				if cjkRun > 0 {
					dst = flushCJKRef(dst, prevCJK, cjkRun, text, ends)
					cjkRun, prevCJK = 0, -1
				}
				if n > 0 {
					dst = emitTokenRef(dst, token{hash: h, runes: n}, text, ends)
					h, n = fnvOffset, 0
				}
				continue
			}
			if cjkRun > 0 {
				dst = flushCJKRef(dst, prevCJK, cjkRun, text, ends)
				cjkRun, prevCJK = 0, -1
			}
			h = (h ^ uint64(c)) * fnvPrime
			n++
			if text != nil {
				*text = append(*text, c)
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if isCJK(r) {
			if n > 0 {
				dst = emitTokenRef(dst, token{hash: h, runes: n}, text, ends)
				h, n = fnvOffset, 0
			}
			if prevCJK >= 0 {
				dst = emitTokenRef(dst, token{hash: hashRuneRef(hashRuneRef(fnvOffset, prevCJK), r), runes: 2, cjk: true}, text, ends)
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
			dst = flushCJKRef(dst, prevCJK, cjkRun, text, ends)
			cjkRun, prevCJK = 0, -1
		}
		if isWordRune(r) {
			f := foldRune(r)
			h = hashRuneRef(h, f)
			n++
			if text != nil {
				*text = utf8.AppendRune(*text, f)
			}
			continue
		}
		if n > 0 {
			dst = emitTokenRef(dst, token{hash: h, runes: n}, text, ends)
			h, n = fnvOffset, 0
		}
	}
	if n > 0 {
		dst = emitTokenRef(dst, token{hash: h, runes: n}, text, ends)
	}
	if cjkRun > 0 {
		dst = flushCJKRef(dst, prevCJK, cjkRun, text, ends)
	}
	return dst
}

// emitToken appends t, and its end offset in *text when the caller keeps
// the text.
func emitTokenRef(dst []token, t token, text *[]byte, ends *[]int) []token {
	dst = append(dst, t)
	if ends != nil {
		*ends = append(*ends, len(*text))
	}
	return dst
}

// flushCJK ends a CJK run: a lone character is a unigram (a longer run has
// already produced its bigrams).
func flushCJKRef(dst []token, prev rune, run int, text *[]byte, ends *[]int) []token {
	if run != 1 {
		return dst
	}
	dst = emitTokenRef(dst, token{hash: hashRuneRef(fnvOffset, prev), runes: 1, cjk: true}, text, ends)
	if text != nil {
		*text = utf8.AppendRune(*text, prev)
		(*ends)[len(*ends)-1] = len(*text)
	}
	return dst
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashRuneRef(h uint64, r rune) uint64 {
	var b [utf8.UTFMax]byte
	n := utf8.EncodeRune(b[:], r)
	for i := 0; i < n; i++ {
		h ^= uint64(b[i])
		h *= fnvPrime
	}
	return h
}

// tokenizeBlocksRef is tokenize as it was when it also tokenized chunk
// texts (commit f900ae7): with text == nil it took eight ASCII bytes at a
// time, word by word (tokenizeBlocksRefRun). scanText replaced that path;
// this is the reference scanTextRef tokenizes with, so scanText is
// compared against the code it replaced.
func tokenizeBlocksRef(s string, dst []token, text *[]byte, ends *[]int) ([]token, int) {
	h, acc, sh := uint64(hashSeed), uint64(0), uint(0) // the current word's hash state
	n := 0                                             // runes in the current word
	var prevCJK rune = -1
	cjkRun := 0
	extra := 0 // bytes beyond the first of each multi-byte rune
	for i := 0; i < len(s); {
		// Eight ASCII bytes at a time while no CJK run is open, the hash
		// state is at a block boundary, and nobody wants the text (the
		// query's path keeps the byte loop below).
		if text == nil && sh == 0 && cjkRun == 0 && i+8 <= len(s) {
			dst, i, h, n = tokenizeBlocksRefRun(s, i, dst, h, n)
			if i == len(s) {
				break
			}
		}
		c := wordByte[s[i]]
		if c == 0 {
			// An ASCII separator ends a CJK run and a word.
			i++
			if cjkRun > 0 {
				dst = flushCJK(dst, prevCJK, cjkRun, text, ends)
				cjkRun, prevCJK = 0, -1
			}
			if n > 0 {
				dst = emitToken(dst, token{hash: hashSum(h, acc, sh), runes: n}, text, ends)
				h, acc, sh, n = hashSeed, 0, 0, 0
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
				dst = emitToken(dst, token{hash: hashSum(h, acc, sh), runes: n}, text, ends)
				h, acc, sh, n = hashSeed, 0, 0, 0
			}
			if prevCJK >= 0 {
				dst = emitToken(dst, token{hash: hashRunes(prevCJK, r), runes: 2, cjk: true}, text, ends)
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
			h, acc, sh = hashRune(h, acc, sh, f)
			n++
			if text != nil {
				*text = utf8.AppendRune(*text, f)
			}
			continue
		}
		if n > 0 {
			dst = emitToken(dst, token{hash: hashSum(h, acc, sh), runes: n}, text, ends)
			h, acc, sh, n = hashSeed, 0, 0, 0
		}
	}
	if n > 0 {
		dst = emitToken(dst, token{hash: hashSum(h, acc, sh), runes: n}, text, ends)
	}
	if cjkRun > 0 {
		dst = flushCJK(dst, prevCJK, cjkRun, text, ends)
	}
	return dst, len(s) - extra
}

// tokenizeBlocksRefRun tokenizes s from i eight ASCII bytes at a time: one test
// per block instead of one per byte, no branch on a word's length, one load
// per word. It stops at a block holding a byte >= 0x80 or fewer than eight
// bytes from the end, handing back the open word's state (h, n) for the
// byte loop to go on with; its state is always at a block boundary. It is a
// function of its own so that its few variables stay in registers.
func tokenizeBlocksRefRun(s string, i int, dst []token, h uint64, n int) ([]token, int, uint64, int) {
	for i+8 <= len(s) {
		x := load64(s, i)
		if x&msb != 0 {
			break
		}
		m, f := wordBlockRef(x)
		if n == 0 {
			if m == 0 {
				i += 8
				continue
			}
			if z := bits.TrailingZeros64(m) >> 3; z > 0 {
				i += z // hashing starts at a word's first byte
				continue
			}
		}
		l := uint(bits.TrailingZeros64(^m&msb) >> 3) // word bytes from i
		n += int(l)
		if l == 8 {
			h = hashBlock(h, f)
			i += 8
			continue
		}
		// The word ends at a separator inside the block; the next word, if
		// it starts in this block, is at its next word byte.
		dst = append(dst, token{hash: hashSum(h, f&(1<<(8*l)-1), 8*l), runes: n})
		h, n = hashSeed, 0
		if next := m &^ (1<<(8*l) - 1); next != 0 {
			i += bits.TrailingZeros64(next) >> 3
		} else {
			i += 8
		}
	}
	return dst, i, h, n
}

// wordBlockRef classifies eight ASCII bytes at once (x has no byte >= 0x80):
// mask has 0x80 in each byte that is a letter or a digit, and folded is x
// with its letters lower-cased. Each range test subtracts per byte with the
// high bit set first, so no borrow crosses into the next byte.
func wordBlockRef(x uint64) (mask, folded uint64) {
	y := x | 0x20*lsb // letters to lower case; a letter is then in 'a'..'z'
	letters := ((y | msb) - 'a'*lsb) & (('z'*lsb | msb) - y) & msb
	digits := ((x | msb) - '0'*lsb) & (('9'*lsb | msb) - x) & msb
	return letters | digits, x | letters>>2
}
