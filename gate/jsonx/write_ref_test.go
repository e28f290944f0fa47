package jsonx

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// appendStringRef is AppendString as it was before it tested eight bytes at
// a time (a table lookup per byte): the reference the fast one must match
// byte for byte.
func appendStringRef(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if safeOut[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
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
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&15])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

var stringRefCases = []string{
	"", "a", "plain text that is longer than eight bytes", `q"b\`, "\b\f\n\r\t\x00\x1f\x7f",
	"</sources><script>&", "a\u2028b\u2029c", "é中😀 текст on a line", "bad\xffutf8\xc3", "\xed\xa0\x80",
	"a\xe2\x80", "12345678\"", "1234567\"8", "\x80\x80\x80\x80\x80\x80\x80\x80\x80",
	strings.Repeat("abcdefg<", 9), strings.Repeat("中", 11) + "<" + strings.Repeat("x", 13),
	"[S1] [", "~~~~~~~~!!!!!!!!####$$$$%%%%''''(())**++,,--..//", "\u2027\u2028\u202a",
}

func TestAppendStringMatchesRef(t *testing.T) {
	for _, s := range stringRefCases {
		checkStringRef(t, s)
	}
	// Every byte value at every offset of a block and its tail.
	for c := 0; c < 256; c++ {
		for at := 0; at < 17; at++ {
			b := []byte(strings.Repeat("x", 17))
			b[at] = byte(c)
			checkStringRef(t, string(b))
		}
	}
}

func checkStringRef(t *testing.T, s string) {
	t.Helper()
	got, want := AppendString([]byte("p:"), s), appendStringRef([]byte("p:"), s)
	if string(got) != string(want) {
		t.Fatalf("AppendString(%q) = %q, reference %q", s, got, want)
	}
	if n := StringLen(s); n != len(want)-2 {
		t.Fatalf("StringLen(%q) = %d, AppendString writes %d", s, n, len(want)-2)
	}
	// Split anywhere on a rune boundary, the content writer gives the same.
	for cut := 0; cut <= len(s); cut++ {
		if cut < len(s) && !utf8.RuneStart(s[cut]) {
			continue
		}
		b := append([]byte("p:\""), nil...)
		b = AppendStringContent(b, s[:cut])
		b = AppendStringContent(b, s[cut:])
		if string(append(b, '"')) != string(want) {
			t.Fatalf("AppendStringContent(%q) split at %d = %q, reference %q", s, cut, b, want)
		}
	}
}

// TestPlainLen checks the block test against the byte table for each stop.
func TestPlainLen(t *testing.T) {
	for _, stop := range []byte{'"', '[', 'a', 0, 0x7f, 0x80, 0xdb, 0xff} {
		for c := 0; c < 256; c++ {
			for at := 0; at < 40; at++ {
				b := []byte(strings.Repeat("xy", 20))
				b[at] = byte(c)
				want := 0
				for want < len(b) && safeOut[b[want]] && b[want] != stop {
					want++
				}
				if got := PlainLen(string(b), stop); got != want {
					t.Fatalf("PlainLen(%q, %q) = %d, want %d", b, stop, got, want)
				}
			}
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringRefCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkStringRef(t, s) })
}

// benchText is ~24 KB of prose with a quote pair and a line break every
// ~370 bytes, like a decision's sources block.
var benchText = strings.Repeat("Photosynthesis converts light energy into chemical energy stored in glucose. "+
	"In the light-dependent reactions, chlorophyll absorbs photons and water is split, releasing oxygen.\n"+
	"The Calvin cycle then fixes carbon dioxide into three-carbon sugars using ATP and NADPH. "+
	"Rates depend on light intensity, CO2 concentration and temperature (\"limiting factors\"). ", 65)

func BenchmarkAppendString(b *testing.B) {
	buf := make([]byte, 0, 2*len(benchText))
	b.SetBytes(int64(len(benchText)))
	for i := 0; i < b.N; i++ { // not b.Loop: TinyGo lacks it
		buf = AppendString(buf[:0], benchText)
	}
}

func BenchmarkAppendStringRef(b *testing.B) {
	buf := make([]byte, 0, 2*len(benchText))
	b.SetBytes(int64(len(benchText)))
	for i := 0; i < b.N; i++ {
		buf = appendStringRef(buf[:0], benchText)
	}
}

// appendFloatRef is AppendFloat as it was before it formatted digits with
// multiplications (strconv.AppendInt and a division per digit): the
// reference the fast one must match byte for byte.
func appendFloatRef(dst []byte, x float64) []byte {
	if x != x || math.IsInf(x, 0) {
		return append(dst, '0')
	}
	if x <= -(1<<33) || x >= 1<<33 {
		return strconv.AppendFloat(dst, Round6(x), 'f', -1, 64)
	}
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

func checkFloatRef(t *testing.T, x float64) {
	// No t.Helper: it costs more than the formatting, millions of times.
	var g, w [64]byte
	got, want := AppendFloat(g[:0], x), appendFloatRef(w[:0], x)
	if string(got) != string(want) {
		t.Fatalf("AppendFloat(%v) = %s, reference %s", x, got, want)
	}
}

func checkKeyFloatRef(t *testing.T, x float64) {
	t.Helper()
	checkFloatRef(t, x)
	want := string(appendFloatRef([]byte(`p,"k":`), x))
	if got := AppendKeyFloat([]byte("p"), `,"k":`, x); string(got) != want {
		t.Fatalf("AppendKeyFloat(%v) = %s, reference %s", x, got, want)
	}
	b := make([]byte, 1, 1) // the grow path
	b[0] = 'p'
	if got := AppendKeyFloat(b, `,"k":`, x); string(got) != want {
		t.Fatalf("AppendKeyFloat(%v) from a full buffer = %s, reference %s", x, got, want)
	}
	if n := FloatLen(x); n != len(want)-len(`p,"k":`) {
		t.Fatalf("FloatLen(%v) = %d, AppendFloat writes %d", x, n, len(want)-len(`p,"k":`))
	}
}

// TestAppendFloatGrid: every value a decision's scores and signals can take
// is on the grid of multiples of 1e-9 in [0, 1] (snapped, then rounded to
// 1e-6 for output). Every multiple of 1e-6 in [-1, 1], both neighbours of
// each, the halfway points between them (where rounding turns) and their
// neighbours, and a stride through the 1e-9 grid give the reference's bytes.
func TestAppendFloatGrid(t *testing.T) {
	step := 1
	if testing.Short() {
		step = 97 // a sample of the grid (scripts/test-tinygo.sh); go test runs all of it
	}
	for n := -1000000; n <= 1000000; n += step {
		x := float64(n) / 1e6
		checkFloatRef(t, x)
		checkFloatRef(t, math.Nextafter(x, 2))
		checkFloatRef(t, math.Nextafter(x, -2))
		h := (float64(n) + 0.5) / 1e6
		checkFloatRef(t, h)
		checkFloatRef(t, math.Nextafter(h, 2))
		checkFloatRef(t, math.Nextafter(h, -2))
	}
	for n := 0; n <= 1e9; n += 9973 * step {
		checkFloatRef(t, float64(n)/1e9)
	}
}

func TestAppendFloatMatchesRef(t *testing.T) {
	edges := []float64{0, 1, -1, 9.9999995, 10, 99.9999995, 1e6, 1e9 + 0.5, 1<<32 + 0.25, 1<<33 - 1e-6, -(1<<33 - 1e-6),
		1 << 33, -(1 << 33), 1e300, -1e-300, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1), math.Inf(-1)}
	for _, x := range edges {
		checkKeyFloatRef(t, x)
		checkKeyFloatRef(t, math.Nextafter(x, math.Inf(1)))
		checkKeyFloatRef(t, math.Nextafter(x, math.Inf(-1)))
	}
	// A value of each magnitude at each power of two, the integer part's
	// digit counts included.
	for e := -30; e <= 40; e++ {
		for _, m := range []float64{1, 1.5, 1.999999999, 1.0000005} {
			checkKeyFloatRef(t, math.Ldexp(m, e))
			checkKeyFloatRef(t, -math.Ldexp(m, e))
		}
	}
}

func FuzzAppendFloat(f *testing.F) {
	for _, x := range []float64{0, 0.5, 0.1234565, -12.3456785, 1<<33 - 1e-6, 1e21, 4.9999999e-7} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) { checkKeyFloatRef(t, x) })
}

func TestAppendKeyStringMatchesRef(t *testing.T) {
	for _, s := range stringRefCases {
		for _, key := range []string{"", `,"id":`} {
			want := appendStringRef([]byte("p:"+key), s)
			if got := AppendKeyString([]byte("p:"), key, s); string(got) != string(want) {
				t.Fatalf("AppendKeyString(%q, %q) = %q, reference %q", key, s, got, want)
			}
			// From a full buffer too (the grow path).
			b := make([]byte, 2, 2)
			copy(b, "p:")
			if got := AppendKeyString(b, key, s); string(got) != string(want) {
				t.Fatalf("AppendKeyString(%q, %q) from a full buffer = %q, reference %q", key, s, got, want)
			}
		}
	}
}
