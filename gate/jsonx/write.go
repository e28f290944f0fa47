package jsonx

import (
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// safeOut marks the bytes AppendString copies as they are: ASCII except
// control characters, '"', '\\', '<', '>' and '&'.
var safeOut = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendString appends s as a JSON string. The escaping is fixed, so equal
// strings always give equal bytes, and matches encoding/json's default
// (HTML-safe) output byte for byte:
//   - `"` and `\` are escaped; \b \f \n \r \t use their short forms; every
//     other control character is \u00XX (lower-case hex);
//   - `<`, `>` and `&` become \u003c \u003e \u0026, and U+2028, U+2029
//     become \u2028 \u2029, so the output can be embedded in HTML or a
//     JavaScript source without closing a tag or a line;
//   - invalid UTF-8 (only possible for strings not produced by Parse) is
//     written as \ufffd rather than producing invalid JSON.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = AppendStringContent(dst, s)
	return append(dst, '"')
}

// AppendStringContent appends s escaped exactly as AppendString escapes it,
// without the quotes: for a writer that builds one JSON string from several
// pieces. Splitting s anywhere except inside a multi-byte rune gives the
// same bytes as escaping it whole.
func AppendStringContent(dst []byte, s string) []byte {
	for i := 0; ; {
		n := PlainLen(s[i:], '"') // '"' is escaped anyway: no extra stop
		dst = append(dst, s[i:i+n]...)
		if i += n; i == len(s) {
			return dst
		}
		dst, i = appendEscape(dst, s, i)
	}
}

// appendEscape writes what AppendString writes for the byte at s[i], which
// PlainLen stopped at, and returns where the copying resumes. A valid
// multi-byte rune is copied with the runes that follow it, so text in a
// non-Latin script is not escaped one rune per call.
func appendEscape(dst []byte, s string, i int) ([]byte, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '<', '>', '&':
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		default:
			if c >= 0x20 {
				dst = append(dst, c) // only a caller's stop byte reaches here
			} else {
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			}
		}
		return dst, i + 1
	}
	j := i
	for j < len(s) && s[j] >= utf8.RuneSelf {
		r, size := utf8.DecodeRuneInString(s[j:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			break
		}
		j += size
	}
	if j > i {
		return append(dst, s[i:j]...), j
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 {
		return append(dst, `\ufffd`...), i + 1
	}
	return append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&15]), i + size
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// PlainLen is the length of the longest prefix of s that AppendString copies
// unchanged (printable ASCII except '"', '\\', '<', '>', '&') and that holds
// no byte stop. It tests sixteen bytes at a time: a decision's text is
// mostly such runs, and a byte loop with a table lookup per byte was most
// of the encoder's time (docs/performance.md).
func PlainLen(s string, stop byte) int {
	if stop >= utf8.RuneSelf {
		stop = '"' // such a byte stops the run anyway; keep st seven bits
	}
	st := uint64(stop) * lsb
	i := 0
	for ; i+16 <= len(s); i += 16 {
		a, b := specialBytes(load64(s, i), st), specialBytes(load64(s, i+8), st)
		if a|b != 0 {
			if a != 0 {
				return i + bits.TrailingZeros64(a)>>3
			}
			return i + 8 + bits.TrailingZeros64(b)>>3
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if m := specialBytes(load64(s, i), st); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(s) && safeOut[s[i]] && s[i] != stop {
		i++
	}
	return i
}

// specialBytes has the high bit set in each byte of x that is not plain (see
// PlainLen) or equals the byte repeated in st, and no other bit. The tests
// run on the low seven bits of each byte, where adding 0x60 or 0x7f never
// carries into the next byte: y+0x60 has bit 7 set when y >= 0x20, and v+0x7f
// when v != 0. Quoted bytes one bit apart share a test: '"' (0x22) and '&'
// (0x26), '<' (0x3c) and '>' (0x3e).
func specialBytes(x, st uint64) uint64 {
	const low7 = 0x7f * lsb
	y := x & low7
	plain := (y + 0x60*lsb) &
		(((y ^ 0x22*lsb) &^ (0x04 * lsb)) + low7) &
		(((y ^ 0x3c*lsb) &^ (0x02 * lsb)) + low7) &
		((y ^ 0x5c*lsb) + low7) &
		((y ^ st) + low7)
	return (^plain | x) & msb // x: bytes >= 0x80
}

// load64 is s[i:i+8] as a little-endian word (one load on amd64 and wasm).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// Round6 rounds x to 6 decimal places the way every gate output number is
// rounded: math.Round(x*1e6)/1e6 (IEEE + - * / and Round are exact and the
// same on every platform). -0 becomes 0. NaN and ±Inf become 0: callers must
// never produce them, and writing 0 keeps the output valid JSON instead of
// emitting a token no JSON parser accepts. Values so large that x*1e6
// overflows are returned unchanged.
func Round6(x float64) float64 {
	if x != x || math.IsInf(x, 0) {
		return 0
	}
	y := x * 1e6
	if !math.IsInf(y, 0) {
		x = math.Round(y) / 1e6
	}
	if x == 0 {
		return 0 // also turns -0 into 0
	}
	return x
}

// AppendFloat appends Round6(x) formatted with strconv 'f' and the shortest
// precision: "0.5", "1", "0.123457". Never an exponent, never -0, never NaN.
//
// The common case is formatted with integer arithmetic: strconv's float
// formatting allocates on every call under TinyGo, and a decision writes
// about a hundred numbers. For |x| < 2^33 the spacing of float64 values is
// below 1e-6, so the only decimal with at most 6 fractional digits that
// rounds to Round6(x) is n/1e6 (n = Round(x*1e6)), which is therefore exactly
// strconv's shortest form; TestAppendFloatMatchesStrconv checks it.
func AppendFloat(dst []byte, x float64) []byte {
	if x != x || math.IsInf(x, 0) {
		return append(dst, '0')
	}
	if x <= -(1<<33) || x >= 1<<33 {
		return strconv.AppendFloat(dst, Round6(x), 'f', -1, 64)
	}
	// The same n Round6 computes (recovering it from Round6(x)*1e6 would
	// not be exact above 2^32).
	n := int64(math.Round(x * 1e6))
	if n < 0 {
		dst = append(dst, '-')
		n = -n
	}
	dst = strconv.AppendInt(dst, n/1e6, 10)
	frac := n % 1e6
	if frac == 0 {
		return dst
	}
	var digits [7]byte
	digits[0] = '.'
	for i := 6; i >= 1; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	end := 7
	for digits[end-1] == '0' {
		end--
	}
	return append(dst, digits[:end]...)
}

// AppendValue appends v compactly in document order. Numbers are written
// exactly as they were in the source; strings are re-escaped with
// AppendString.
func AppendValue(dst []byte, v *Value) []byte {
	return appendValue(dst, v, false)
}

// AppendCanonical appends v in the canonical form policy hashes and
// signatures are computed over: compact, object keys sorted by their UTF-8
// bytes at every level, numbers as written in the source, strings escaped by
// AppendString. Two documents that differ only in whitespace, key order or
// string escaping have the same canonical bytes. Numbers are kept raw (1.0
// and 1 stay different): rewriting them would make the hash depend on float
// formatting, and a policy author who changes a number has changed the policy.
func AppendCanonical(dst []byte, v *Value) []byte {
	return appendValue(dst, v, true)
}

// appendValue recurses once per nesting level; values come from Parse with a
// depth limit, which bounds the stack (fixed and small on Wasm).
func appendValue(dst []byte, v *Value, canonical bool) []byte {
	switch v.Kind() {
	case Null:
		return append(dst, "null"...)
	case Bool:
		if v.b {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Number:
		if raw := v.text(); raw != "" {
			return append(dst, raw...)
		}
		return append(dst, '0') // only a Value whose Parser has parsed again
	case String:
		return AppendString(dst, v.text())
	case Array:
		items := v.children()
		dst = append(dst, '[')
		for i := range items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, &items[i], canonical)
		}
		return append(dst, ']')
	case Object:
		items := v.children()
		n := len(items) / 2
		dst = append(dst, '{')
		if !canonical {
			for i := 0; i < n; i++ {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = AppendString(dst, items[2*i].text())
				dst = append(dst, ':')
				dst = appendValue(dst, &items[2*i+1], canonical)
			}
			return append(dst, '}')
		}
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		// Stable, so the output stays deterministic even for a hand-built
		// value with repeated keys (Parse never produces one).
		slices.SortStableFunc(order, func(a, b int) int {
			ka, kb := items[2*a].text(), items[2*b].text()
			switch {
			case ka < kb:
				return -1
			case ka > kb:
				return 1
			}
			return 0
		})
		for j, i := range order {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, items[2*i].text())
			dst = append(dst, ':')
			dst = appendValue(dst, &items[2*i+1], canonical)
		}
		return append(dst, '}')
	}
	return append(dst, "null"...)
}
