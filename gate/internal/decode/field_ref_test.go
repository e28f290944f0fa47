package decode

import (
	"strings"
	"testing"
)

// fieldNames are the member names by field code (code k is fieldNames[k],
// fNone ""): the generated lists, whose order is the codes' order.
var fieldNames = append([]string{""}, strings.Fields(requestFields+" "+chunkFields+" "+scoreFields)...)

// fieldRef is field read the plain way: the name's bytes one by one into a
// string, looked up by name among fieldNames. TestFieldMatchesRef and
// FuzzFieldWords hold field, which matches packed words, to it (code,
// position and value count).
func (d *directDecoder) fieldRef() int {
	s, i := d.src, d.pos
	for i < len(s) && s[i] <= ' ' && isSpace(s[i]) {
		i++
	}
	if i >= len(s) || s[i] != '"' {
		return fNone
	}
	d.values++
	i++
	start := i
	for ; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			break
		}
		if c < 0x20 || c >= 0x7f || c == '\\' || i-start >= maxFieldLen {
			return fNone
		}
	}
	if i >= len(s) {
		return fNone
	}
	name := string(s[start:i])
	i++
	for i < len(s) && s[i] <= ' ' && isSpace(s[i]) {
		i++
	}
	if i >= len(s) || s[i] != ':' {
		return fNone
	}
	i++
	for i < len(s) && s[i] <= ' ' && isSpace(s[i]) {
		i++
	}
	d.pos = i
	for f, n := range fieldNames {
		if f > 0 && n == name {
			return f
		}
	}
	return fNone
}

// fieldSame runs field and fieldRef on src and reports whether they agree.
func fieldSame(t testing.TB, src []byte) {
	t.Helper()
	a := directDecoder{src: src}
	b := directDecoder{src: src}
	fa, fb := a.field(), b.fieldRef()
	if fa != fb || (fa != fNone && (a.pos != b.pos || a.values != b.values)) {
		t.Fatalf("field(%q) = %d at %d (%d values), ref %d at %d (%d values)", src, fa, a.pos, a.values, fb, b.pos, b.values)
	}
}

// Every field name and near misses of it (cut, extended, a byte changed to
// each value that matters, an escape), with the closing quote at every
// offset around the two words and tails that are short (the byte loop) or
// long (the words).
func TestFieldMatchesRef(t *testing.T) {
	names := strings.Fields(requestFields + " " + chunkFields + " " + scoreFields + " x querys results_per_queryy")
	var cases []string
	for _, n := range names {
		cases = append(cases, n, n+"\x00", n+"\\", n+"\\\"", n+"\x7f", n+"é", strings.ToUpper(n), n[:len(n)-1], n+n)
		for k := 0; k < len(n); k++ {
			for _, c := range []byte{0, 0x1f, '"', '\\', 0x7f, 0x80, 0xff, n[k] ^ 0x20, n[k] + 1} {
				b := []byte(n)
				b[k] = c
				cases = append(cases, string(b))
			}
		}
	}
	tails := []string{`:1`, ` : 1`, `:`, ``, ` `, `x:1`, `:` + strings.Repeat(" ", 20) + `1`, `:1,"text":"` + strings.Repeat("a", 20) + `"}`}
	for _, c := range cases {
		for _, tail := range tails {
			for _, lead := range []string{``, ` `, "\n\t "} {
				fieldSame(t, []byte(lead+`"`+c+`"`+tail))
				fieldSame(t, []byte(lead+`"`+c+tail)) // no closing quote
			}
		}
	}
}

func FuzzFieldWords(f *testing.F) {
	for _, s := range []string{`"text":"a"`, `"results_per_query": [`, `"query_embedding":[1]`, `"metadata" :{}`, `"id\u0000":1`, `"vector":0.5,"bm25":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		fieldSame(t, src)
	})
}
