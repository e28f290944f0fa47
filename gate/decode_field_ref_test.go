package gate

import (
	"strings"
	"testing"
)

// fieldRef is field as it was before it loaded the name as two words: a
// loop over the name's bytes. TestFieldMatchesRef and FuzzFieldWords hold
// field to it (code, position and value count).
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
	var w0, w1 uint64
	for ; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			break
		}
		n := i - start
		if c < 0x20 || c >= 0x7f || c == '\\' || n > 16 {
			return fNone
		}
		if n < 8 {
			w0 |= uint64(c) << (8 * n)
		} else if n < 16 {
			w1 |= uint64(c) << (8 * (n - 8))
		}
	}
	n := i - start
	if i >= len(s) {
		return fNone
	}
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
	// A name's bytes are never 0, so a short word equals only its own
	// name; the long names check their second word and length.
	f := fNone
	switch w0 {
	case wQuery:
		f = fQuery
	case wChunks:
		f = fChunks
	case wQueryEmb0:
		if w1 == wQueryEmb1 {
			f = fQueryEmbedding
		}
	case wResults0:
		if w1 == wResults1 && n == 17 && s[start+16] == 'y' {
			return fResults
		}
	case wNow:
		f = fNow
	case wID:
		f = fID
	case wDocID:
		f = fDocID
	case wTitle:
		f = fTitle
	case wText:
		f = fText
	case wScores:
		f = fScores
	case wUpdated0:
		if w1 == wUpdated1 {
			f = fUpdated
		}
	case wTrust:
		f = fTrust
	case wUntrusted0:
		if w1 == wUntrusted1 {
			f = fUntrusted
		}
	case wEmbedding0:
		if w1 == wEmbedding1 {
			f = fEmbedding
		}
	case wTemp0:
		if w1 == wTemp1 {
			f = fTemperature
		}
	case wMetadata:
		if w1 == 0 {
			f = fMetadata
		}
	case wVector:
		f = fVector
	case wBM25:
		f = fBM25
	case wRerank:
		f = fRerank
	case wRRF:
		f = fRRF
	case wBoosted:
		f = fBoosted
	case wGraph:
		f = fGraph
	case wSparse:
		f = fSparse
	}
	if n > 16 {
		return fNone // only results_per_query is longer
	}
	return f
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
