package jsonx

import (
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/ctxgate/ctxgate/gate/internal/swar"
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
	return AppendKeyString(dst, "", s)
}

// AppendKeyString appends key unchanged (raw JSON, such as `,"id":`), then s
// as AppendString writes it. A string with nothing to escape, nearly every
// one an encoder writes, goes in with one capacity check and two copies:
// under TinyGo (-opt=z, little inlining) each append is a runtime call, and
// the calls, not the bytes, were most of a decision's encoding time.
func AppendKeyString(dst []byte, key, s string) []byte {
	n := PlainLen(s, '"')
	l, need := len(dst), len(key)+n+2
	if cap(dst)-l < need {
		dst = grow(dst, need)
	}
	if n < len(s) {
		dst = append(dst, key...)
		dst = append(dst, '"')
		dst = appendContent(dst, s, 0)
		return append(dst, '"')
	}
	dst = dst[:l+need]
	k := l + copy(dst[l:], key)
	dst[k] = '"'
	copy(dst[k+1:], s)
	dst[l+need-1] = '"'
	return dst
}

// grow returns dst with room for n more bytes, at least doubling its
// capacity so a writer that grows often copies rarely.
func grow(dst []byte, n int) []byte {
	g := make([]byte, len(dst), 2*cap(dst)+n)
	copy(g, dst)
	return g
}

// AppendStringContent appends s escaped exactly as AppendString escapes it,
// without the quotes: for a writer that builds one JSON string from several
// pieces. Splitting s anywhere except inside a multi-byte rune gives the
// same bytes as escaping it whole.
func AppendStringContent(dst []byte, s string) []byte {
	return appendContent(dst, s, 0)
}

// appendContent is AppendStringContent(dst, s[i:]).
func appendContent(dst []byte, s string, i int) []byte {
	for {
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
	if j := copiedRun(s, i); j > i {
		return append(dst, s[i:j]...), j
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 {
		return append(dst, `\ufffd`...), i + 1
	}
	return append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&15]), i + size
}

// copiedRun returns the end of the run of multi-byte runes at s[i] that
// AppendString copies as they are: valid UTF-8 other than U+2028 and
// U+2029 (i when there is none).
func copiedRun(s string, i int) int {
	j := i
	for j < len(s) && s[j] >= utf8.RuneSelf {
		r, size := utf8.DecodeRuneInString(s[j:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			break
		}
		j += size
	}
	return j
}

// PlainLen is the length of the longest prefix of s that AppendString copies
// unchanged (printable ASCII except '"', '\\', '<', '>', '&') and that holds
// no byte stop. It tests sixteen bytes at a time: a decision's text is
// mostly such runs, and a byte loop with a table lookup per byte was most
// of the encoder's time (docs/performance.md).
func PlainLen(s string, stop byte) int {
	if stop >= utf8.RuneSelf {
		stop = '"' // such a byte stops the run anyway; keep st seven bits
	}
	st := uint64(stop) * swar.Lsb
	i := 0
	// specialBytes written out twice: TinyGo (-opt=z) does not inline it,
	// and two calls per sixteen bytes cost more than the tests themselves.
	for ; i+16 <= len(s); i += 16 {
		x, z := swar.Load64(s, i), swar.Load64(s, i+8)
		y, w := x&swar.Low7, z&swar.Low7
		a := (^((y + 0x60*swar.Lsb) &
			(((y ^ 0x22*swar.Lsb) &^ (0x04 * swar.Lsb)) + swar.Low7) &
			(((y ^ 0x3c*swar.Lsb) &^ (0x02 * swar.Lsb)) + swar.Low7) &
			((y ^ 0x5c*swar.Lsb) + swar.Low7) &
			((y ^ st) + swar.Low7)) | x) & swar.Msb
		b := (^((w + 0x60*swar.Lsb) &
			(((w ^ 0x22*swar.Lsb) &^ (0x04 * swar.Lsb)) + swar.Low7) &
			(((w ^ 0x3c*swar.Lsb) &^ (0x02 * swar.Lsb)) + swar.Low7) &
			((w ^ 0x5c*swar.Lsb) + swar.Low7) &
			((w ^ st) + swar.Low7)) | z) & swar.Msb
		if a|b != 0 {
			if a != 0 {
				return i + bits.TrailingZeros64(a)>>3
			}
			return i + 8 + bits.TrailingZeros64(b)>>3
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if m := specialBytes(swar.Load64(s, i), st); m != 0 {
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
	y := x & swar.Low7
	plain := (y + 0x60*swar.Lsb) &
		(((y ^ 0x22*swar.Lsb) &^ (0x04 * swar.Lsb)) + swar.Low7) &
		(((y ^ 0x3c*swar.Lsb) &^ (0x02 * swar.Lsb)) + swar.Low7) &
		((y ^ 0x5c*swar.Lsb) + swar.Low7) &
		((y ^ st) + swar.Low7)
	return (^plain | x) & swar.Msb // x: bytes >= 0x80
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
func AppendFloat(dst []byte, x float64) []byte {
	return AppendKeyFloat(dst, "", x)
}

// AppendKeyFloat appends key unchanged (raw JSON, such as `,"score":`), then
// x as AppendFloat writes it.
//
// The common case is formatted with integer arithmetic: strconv's float
// formatting allocates on every call under TinyGo, and a decision writes
// about a hundred numbers. For |x| < 2^33 the spacing of float64 values is
// below 1e-6, so the only decimal with at most 6 fractional digits that
// rounds to Round6(x) is n/1e6 (n = Round(x*1e6)), which is therefore exactly
// strconv's shortest form; TestAppendFloatMatchesStrconv checks it, and
// TestAppendFloatGrid every multiple of 1e-6 in [0, 1] against the
// previous writer. The digits come from multiplications, not divisions: a
// 64-bit division by a constant stays a division instruction on wasm32,
// and the previous writer's eight of them were most of its time in the
// TinyGo module. Numbers in [0, 1) (scores, signals) need no division.
func AppendKeyFloat(dst []byte, key string, x float64) []byte {
	if !(x > -(1<<33) && x < 1<<33) { // also NaN
		dst = append(dst, key...)
		if x != x || math.IsInf(x, 0) {
			return append(dst, '0')
		}
		return strconv.AppendFloat(dst, Round6(x), 'f', -1, 64)
	}
	l := len(dst)
	if cap(dst)-l < len(key)+MaxPutFloat {
		dst = grow(dst, len(key)+MaxPutFloat)
	}
	b := dst[l : l+len(key)+MaxPutFloat]
	k := copy(b, key)
	return dst[:l+k+PutFloat(b[k:], x)]
}

// MaxPutFloat is the room PutFloat needs: sign, ten integer digits (below
// 2^33), point, six fraction digits.
const MaxPutFloat = 1 + 10 + 1 + 6

// PutFloat writes x as AppendFloat writes it at the start of b, which has
// at least MaxPutFloat bytes, and returns how many it wrote; when |x| >=
// 2^33 (or x is not finite) it writes nothing and returns 0, and the caller
// takes AppendKeyFloat. For an encoder writing a whole object after one
// capacity check.
func PutFloat(b []byte, x float64) int {
	if !(x > -(1<<33) && x < 1<<33) || len(b) < MaxPutFloat {
		return 0
	}
	b = b[:MaxPutFloat]
	// n = math.Round(y), the same n Round6 computes: |y| < 2^53, so the
	// conversion truncates exactly and y-t is exact.
	y := x * 1e6
	n := int64(y)
	if f := y - float64(n); f >= 0.5 {
		n++
	} else if f <= -0.5 {
		n--
	}
	k := 0
	if n < 0 {
		b[k] = '-'
		k++
		n = -n
	}
	u, ip := uint64(n), uint64(0)
	if u >= 1e6 {
		ip = u / 1e6
		u -= ip * 1e6
	}
	if ip < 10 {
		b[k] = byte('0' + ip)
		k++
	} else {
		var t [10]byte
		j := len(t)
		for ip > 0 {
			q := ip / 10
			j--
			t[j] = byte('0' + ip - q*10)
			ip = q
		}
		k += copy(b[k:], t[j:])
	}
	if u == 0 {
		return k
	}
	// Six fraction digits, right to left; q = f/10 exactly for f < 2^32.
	f := uint32(u)
	b[k] = '.'
	for j := k + 6; j > k; j-- {
		q := uint32(uint64(f) * 0xcccccccd >> 35)
		b[j] = byte('0' + f - q*10)
		f = q
	}
	k += 7
	for b[k-1] == '0' {
		k--
	}
	return k
}

// PutPlain copies s to the start of b and returns len(s) when AppendString
// would copy every byte of s unchanged and b has room; else it returns -1
// (b's bytes then undefined). One pass that checks and copies: for the short
// ids and tokens of an object written after one capacity check.
func PutPlain(b []byte, s string) int {
	if len(b) < len(s) {
		return -1
	}
	b = b[:len(s)]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !safeOut[c] {
			return -1
		}
		b[i] = c
	}
	return len(s)
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
