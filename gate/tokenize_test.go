package gate

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func tokenStrings(s string) []string {
	var text []byte
	var ends []int
	toks, _ := tokenize(s, nil, &text, &ends)
	out := make([]string, len(toks))
	start := 0
	for i := range toks {
		out[i] = string(text[start:ends[i]])
		start = ends[i]
		if toks[i].hash != hashString(out[i]) {
			out[i] += "!hash"
		}
	}
	return out
}

func TestTokenize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Photosynthesis? Light-energy, (CO2)!", "photosynthesis light energy co2"},
		{"  ", ""},
		{"Ünïcödé ΣΊΣΥΦΟΣ москва", "ünïcödé σίσυφοσ москва"},
		{"don't", "don t"},
		{"東京都に住む", "東京 京都 都に に住 住む"},
		{"a 東 b", "a 東 b"},
		{"GPT4 vs gpt4", "gpt4 vs gpt4"},
		{"한국어 text", "한국 국어 text"},
		{"हिन्दी भाषा", "हिन्दी भाषा"},
	}
	for _, c := range cases {
		got := strings.Join(tokenStrings(c.in), " ")
		if got != c.want {
			t.Errorf("%q: got %q want %q", c.in, got, c.want)
		}
	}
}

func TestHashSet(t *testing.T) {
	var s hashSet
	s.reset(2)
	for i := uint64(0); i < 1000; i++ {
		s.add(i * 7919)
	}
	for i := uint64(0); i < 1000; i++ {
		if !s.has(i * 7919) {
			t.Fatalf("missing %d", i)
		}
	}
	if s.has(13) || s.count != 1000 {
		t.Fatalf("count %d", s.count)
	}
	if !qualityStopSet.has(hashString("the")) || qualityStopSet.has(hashString("photosynthesis")) {
		t.Fatal("stop words")
	}
	if len(qualityStopWords) != 105 {
		t.Fatalf("the quality stop list has 105 words, got %d", len(qualityStopWords))
	}
}

func TestExpDet(t *testing.T) {
	for x := -30.0; x <= 30; x += 0.37 {
		got, want := expDet(x), math.Exp(x)
		if math.Abs(got-want)/want > 1e-14 {
			t.Fatalf("exp(%v) = %v want %v", x, got, want)
		}
	}
	if s := sigmoid(0); s != 0.5 {
		t.Fatalf("sigmoid(0) = %v", s)
	}
	if s := sigmoid(-1000); s < 0 || s > 1e-300 {
		t.Fatalf("sigmoid(-1000) = %v", s)
	}
	if !near(pow2(-1), 0.5) || !near(pow2(3), 8) {
		t.Fatal("pow2")
	}
}

// Python's "{:.0%}" rounds half to even on the binary value of x·100.
func TestPercentLikePython(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{{1, "100%"}, {0.8, "80%"}, {0.125, "12%"}, {0.135, "14%"}, {0.005, "0%"}, {0.015, "2%"}, {0.7142857, "71%"}} {
		if got := string(appendPercent([]byte("x"), c.x)); got != "x"+c.want {
			t.Errorf("appendPercent(%v) = %s want x%s", c.x, got, c.want)
		}
	}
}

func TestSortDescStable(t *testing.T) {
	key := []float64{0.5, 0.9, 0.5, 0.1, 0.9, 0.5}
	idx := []int{0, 1, 2, 3, 4, 5}
	sortDesc(idx, key, make([]int, 6))
	want := []int{1, 4, 0, 2, 5, 3}
	for i := range want {
		if idx[i] != want[i] {
			t.Fatalf("got %v want %v", idx, want)
		}
	}
}

// tokenCases are inputs where a table-driven fast path could part from the
// reference: case folding at every ASCII edge, words that run from ASCII
// into other scripts and back, CJK runs next to ASCII, invalid UTF-8.
var tokenCases = []string{
	"", "a", "A", "@[`{", "Z9z0 @@ a", "Photosynthesis? Light-energy, (CO2)!",
	"caféBar naïve Ünïcödé", "abc東京def", "東a京", "東", "a東", "東 京", "x\u0301y",
	"\xff\xfeabc\xc3", "abc\xe2\x82", "\xe2\x82abc", "don't stop--me now", "tab\there\nnew\r\nline",
	"ΣΊΣΥΦΟΣ москва 한국어 text हिन्दी", "GPT4 vs gpt4", "日本語のテキストとEnglish mixed",
	// Longer than a block: words across block edges, ending on them, and
	// non-ASCII or CJK inside or right after an ASCII run.
	"The Quick brown FOX jumps over the lazy dog, 1234567890 times!",
	"abcdefgh ijklmnop qrstuvwxyz0123456789abcdefghijklmnopq. stuvwxyz",
	"eightchr        sixteencharacter@@@@@@@@@@@@@@@@x",
	"ASCIIwordcafé naïveté résumé-résumé Straßenbahnhaltestelle",
	"longasciiword東京の会社 and then English again, 漢 alone",
	"\x00\x01\x10\x19\x1f 0123456789:;<=>?@ABCXYZ[\\]^_`abcxyz{|}~\x7f end",
	"words\xffwith\xc3invalid\xe2\x82bytes between them and at the end\xe2",
}

// The tokenizer gives exactly the reference's tokens, folded text and rune
// count (utf8.RuneCountInString's), and the same tokens on its block path
// (no text wanted) as on its byte path.
func TestTokenizeMatchesRef(t *testing.T) {
	for _, s := range tokenCases {
		// Every alignment of the eight-byte blocks against the words.
		for k := 0; k <= 8; k++ {
			checkTokenizeRef(t, strings.Repeat(" ", k)+s)
		}
	}
}

func checkTokenizeRef(t *testing.T, s string) {
	t.Helper()
	var text, textRef []byte
	var ends, endsRef []int
	got, runes := tokenize(s, nil, &text, &ends)
	want := tokenizeRef(s, nil, &textRef, &endsRef)
	if len(got) != len(want) || string(text) != string(textRef) || len(ends) != len(endsRef) {
		t.Fatalf("%q: %d tokens %q, reference %d tokens %q", s, len(got), text, len(want), textRef)
	}
	start := 0
	for i := range got {
		if got[i].runes != want[i].runes || got[i].cjk != want[i].cjk || ends[i] != endsRef[i] {
			t.Fatalf("%q: token %d %+v end %d, reference %+v end %d", s, i, got[i], ends[i], want[i], endsRef[i])
		}
		if h := hashString(string(text[start:ends[i]])); got[i].hash != h {
			t.Fatalf("%q: token %d %q hashes to %x, hashString to %x", s, i, text[start:ends[i]], got[i].hash, h)
		}
		start = ends[i]
	}
	if want := utf8.RuneCountInString(s); runes != want {
		t.Fatalf("%q: %d runes, want %d", s, runes, want)
	}
	bare, _ := tokenize(s, nil, nil, nil)
	if len(bare) != len(got) {
		t.Fatalf("%q: %d tokens without text, %d with", s, len(bare), len(got))
	}
	for i := range bare {
		if bare[i] != got[i] {
			t.Fatalf("%q: token %d differs without text", s, i)
		}
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range tokenCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkTokenizeRef(t, s) })
}

// Every length and alignment of the eight-byte blocks: different words hash
// differently, equal words alike, whatever surrounds them.
func TestHashBlocks(t *testing.T) {
	seen := map[uint64]string{}
	for n := 1; n <= 40; n++ {
		for _, w := range []string{strings.Repeat("a", n), strings.Repeat("a", n-1) + "b", "b" + strings.Repeat("a", n-1)} {
			h := hashString(w)
			if o, ok := seen[h]; ok && o != w {
				t.Fatalf("%q and %q hash alike", w, o)
			}
			seen[h] = w
			toks, _ := tokenize("x "+strings.ToUpper(w)+", y", nil, nil, nil)
			if len(toks) != 3 || toks[1].hash != h {
				t.Fatalf("%q: tokens %+v, want its hash %x in the middle", w, toks, h)
			}
		}
	}
}

// TestLatin1Fold: the Latin-1 table gives what the unicode package does, so
// isWordRune and foldRune are unchanged by it.
func TestLatin1Fold(t *testing.T) {
	for r := rune(0); r <= unicode.MaxLatin1; r++ {
		word := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
		if got := isWordRune(r); got != word {
			t.Fatalf("isWordRune(%U) = %v, unicode says %v", r, got, word)
		}
		if word {
			if got, want := foldRune(r), unicode.ToLower(r); got != want {
				t.Fatalf("foldRune(%U) = %U, unicode.ToLower gives %U", r, got, want)
			}
		}
	}
}

// TestLongQueryRefilters: a query of 1,300 terms against chunks that hold
// them all recomputes the scanner's filter a few dozen times a chunk, not
// once per term found (which made such a request take seconds: 1.7
// million steps a chunk), and finds every term.
func TestLongQueryRefilters(t *testing.T) {
	var q strings.Builder
	for i := 0; q.Len() < 4000; i++ {
		if i > 0 {
			q.WriteByte(' ')
		}
		q.WriteString("t" + strconv.FormatInt(int64(i), 36))
	}
	query := q.String()
	req := &Request{Query: query}
	for i := 0; i < 20; i++ {
		req.Chunks = append(req.Chunks, Chunk{ID: "c" + strconv.Itoa(i), Text: query, Scores: Scores{Vector: 0.9, HasVector: true}})
	}
	e := presetEngine(t, "default")
	if _, err := e.Decide(req); err != nil {
		t.Fatal(err)
	}
	terms := len(e.q.terms)
	if per := e.q.refilters / len(req.Chunks); per > 64 {
		t.Errorf("%d query terms: the filter was recomputed %d times a chunk", terms, per)
	}
	for k, f := range e.q.found {
		if !f {
			t.Fatalf("term %d of %d not found", k, terms)
		}
	}
}
