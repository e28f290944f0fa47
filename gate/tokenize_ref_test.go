package gate

import "unicode/utf8"

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
