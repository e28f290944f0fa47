package jsonx

import (
	"strconv"
	"unicode/utf8"
)

// The sizes of what the writers write, without writing it: a writer that
// must not produce more than a limit (the gate's max_decision_bytes) asks
// first, so an output that escaping would blow up to many times its input
// is refused before any of it is allocated. Each is exact, and checked
// against its writer (checkStringRef, FuzzAppendString, FuzzAppendFloat).

// StringLen is len(AppendString(nil, s)): quotes and escapes included.
func StringLen(s string) int { return 2 + StringContentLen(s) }

// StringContentLen is len(AppendStringContent(nil, s)).
func StringContentLen(s string) int {
	n := 0
	for i := 0; ; {
		k := PlainLen(s[i:], '"')
		n += k
		if i += k; i == len(s) {
			return n
		}
		w, next := escapeLen(s, i)
		n += w
		i = next
	}
}

// escapeLen is what appendEscape writes for s[i] (and the runes it copies
// with it): its length, and where the copying resumes.
func escapeLen(s string, i int) (int, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		switch c {
		case '"', '\\', '\b', '\f', '\n', '\r', '\t':
			return 2, i + 1
		case '<', '>', '&':
			return 6, i + 1
		}
		if c >= 0x20 {
			return 1, i + 1
		}
		return 6, i + 1
	}
	if j := copiedRun(s, i); j > i {
		return j - i, j
	}
	_, size := utf8.DecodeRuneInString(s[i:])
	return 6, i + size // \ufffd for one invalid byte (size 1), \u2028 or \u2029
}

// FloatLen is len(AppendFloat(nil, x)).
func FloatLen(x float64) int {
	var b [MaxPutFloat]byte
	if n := PutFloat(b[:], x); n > 0 {
		return n
	}
	if x != x || x > 1.7976931348623157e308 || x < -1.7976931348623157e308 {
		return 1 // "0"
	}
	var big [330]byte // 'f' of the largest float64: 309 digits and a sign
	return len(strconv.AppendFloat(big[:0], Round6(x), 'f', -1, 64))
}

// NumberFinite reports whether the number text raw (valid JSON grammar)
// converts to a finite float64 (strconv.ParseFloat), converting it only
// when its magnitude is near the largest float64: the first significant
// digit's place and the exponent decide every other number. A parse used
// to convert every number with an exponent, and 4 MiB of "1.5e300," were
// half a million conversions (a third of a second in the TinyGo module).
// Numbers of over 800 characters, or with an exponent of five digits or
// more, are converted: that is where ParseFloat stops reading digits and
// exponents exactly, and its answer, not the number's true magnitude, is
// what every reader of the value gets.
func NumberFinite(raw string) bool {
	if len(raw) > 800 {
		return isFinite(parseFloat(raw))
	}
	i := 0
	if i < len(raw) && raw[i] == '-' {
		i++
	}
	// place: the power of ten just above the first significant digit
	// (12.5 -> 2, 0.05 -> -1); none when every digit is a zero.
	place, seen, zeros := 0, false, 0
	for ; i < len(raw) && raw[i] >= '0' && raw[i] <= '9'; i++ {
		if raw[i] != '0' || seen {
			seen = true
			place++
		}
	}
	if i < len(raw) && raw[i] == '.' {
		for i++; i < len(raw) && raw[i] >= '0' && raw[i] <= '9'; i++ {
			if !seen {
				if raw[i] != '0' {
					seen = true
					place = -zeros
				} else {
					zeros++
				}
			}
		}
	}
	if !seen {
		return true // zero
	}
	exp := 0
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		neg := false
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			neg = raw[i] == '-'
			i++
		}
		digits := 0
		for ; i < len(raw) && raw[i] >= '0' && raw[i] <= '9'; i++ {
			if exp = exp*10 + int(raw[i]-'0'); exp != 0 {
				digits++
			}
		}
		if digits > 4 {
			return isFinite(parseFloat(raw))
		}
		if neg {
			exp = -exp
		}
	}
	// The value is in [10^(place+exp-1), 10^(place+exp)); the largest
	// float64 is 1.797...e308.
	switch top := place + exp; {
	case top <= 308:
		return true
	case top >= 311:
		return false
	}
	return isFinite(parseFloat(raw))
}

// Hex4 is the rune of the four hex digits at b[i:] (a \u escape's), or
// false when there are not four: for readers of JSON text that is not
// parsed (the gate's direct decoder, the chat splicer's member names).
func Hex4(b []byte, i int) (rune, bool) {
	if i < 0 || len(b)-i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
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
