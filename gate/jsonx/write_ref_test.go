package jsonx

import (
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
