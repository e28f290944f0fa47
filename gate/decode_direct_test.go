package gate

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/internal/hostile"
)

// The direct decoder (decode_direct.go) must agree with the tree decoder
// (decodeRequestTree, the error path and the reference): whenever it
// succeeds, the tree decoder succeeds with the same Request. Whenever it
// gives up, the tree decoder's result is returned, so every error is the
// tree decoder's by construction; these tests check both halves through the
// public entry points, with caller-owned and engine-owned memory.

// directLimits are the limit sets the differential checks run under: the
// defaults, and small ones so every limit (values, depth, lengths) bites.
var directLimits = []*Limits{
	nil,
	{MaxRequestBytes: 600, MaxChunks: 3, MaxQueries: 2, MaxChunkBytes: 40, MaxTotalBytes: 60,
		MaxQueryBytes: 20, MaxEmbeddingDims: 4, MaxDepth: 6},
	{MaxRequestBytes: 160, MaxDepth: 4}, // a value budget of 40
}

// checkDirect decodes data every way and fails t on any disagreement. It
// returns whether the direct decoder accepted data (caller-owned memory).
func checkDirect(t *testing.T, data []byte, lim *Limits, m *requestMemory) bool {
	t.Helper()
	var ps jsonx.Parser
	want, werr := decodeRequestTree(&ps, append([]byte(nil), data...), lim, false)

	l := lim.resolved()
	direct := false
	if len(data) <= l.MaxRequestBytes {
		for _, owned := range []bool{false, true} {
			mem := m
			if !owned {
				mem = nil
			}
			got, ok := decodeDirect(data, &l, mem, owned)
			if !ok {
				continue
			}
			direct = direct || !owned
			if werr != nil {
				t.Fatalf("direct (owned %v) accepted what the tree decoder rejects (%v):\n%q", owned, werr, data)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("direct (owned %v) decoded differently:\n got %+v\nwant %+v\ninput %q", owned, got, want, data)
			}
		}
	}

	// The public paths: the same Request or the same error bytes.
	in := append([]byte(nil), data...)
	got, err := DecodeRequest(in, lim)
	sameResult(t, "DecodeRequest", data, got, err, want, werr)
	if string(in) != string(data) && err == nil && direct {
		t.Fatalf("DecodeRequest modified its input")
	}
	got, err = DecodeRequestInPlace(append([]byte(nil), data...), lim)
	sameResult(t, "DecodeRequestInPlace", data, got, err, want, werr)
	return direct
}

func sameResult(t *testing.T, what string, data []byte, got *Request, err error, want *Request, werr *Error) {
	t.Helper()
	if werr != nil {
		if err == nil || string(AppendError(nil, err)) != string(AppendError(nil, werr)) {
			t.Fatalf("%s: error %v, want %v\ninput %q", what, err, werr, data)
		}
		return
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: %+v, %v\nwant %+v\ninput %q", what, got, err, want, data)
	}
}

// directCases are requests the direct decoder must take itself (valid, in
// every shape it supports) and near misses it must hand to the tree decoder.
var directCases = []string{
	`{"query":"q"}`,
	` {"query" : "q" , "chunks" : [ ] } `,
	`{"query":"  q\t","chunks":null,"query_embedding":null,"results_per_query":null,"now":null}`,
	`{"query":"caf\u00e9 \ud83d\ude00 \"x\" \\ \/ \b\f\n\r\t \u0000","chunks":[{"id":"\u00e9","text":"na\u00efve – ok"}]}`,
	`{"chunks":[{"id":"a","doc_id":"d","title":"t","text":"x","scores":{"vector":-0.2,"bm25":0,"rerank":-4,"rrf":0.01,"boosted":0.3,"graph":1e-400,"sparse":1.4e6},"updated_at":"2023-01-01T00:00:00Z","trust":1,"untrusted":false,"embedding":[1,0],"temperature":-37.5e1,"metadata":{"k":[1,{"a":null,"b":true,"c":"\u00e9"}],"":-0,"x":{}}},{"id":null,"title":null,"scores":null,"metadata":null}],"query_embedding":[0.5,-0.5],"query":"q"}`,
	`{"query":"q","results_per_query":[[{"id":"a","scores":{"vector":1.0000000005}}],[{"id":"a"},{}],[]]}`,
	`{"query":"q","results_per_query":[]}`,
	`{"query":"q","now":"2024-05-01T12:00:00+02:00"}`,
	// Near misses: each is rejected, or valid in a shape the direct decoder leaves to the tree.
	``, ` `, `[]`, `"q"`, `{}`, `{"query":""}`, `{"query":"  "}`, `{"query":null}`, `{"query":1}`,
	`{"query":"q",}`, `{"query":"q"} x`, `{"query":"q"`, `{"query":"q","query":"r"}`,
	`{"q\u0075ery":"q"}`, `{"query":"q","chunks":[{"metadata":{"a":1,"a":2}}]}`,
	`{"query":"q","chunks":[{"metadata":{"a\u0062":1,"ab":2}}]}`,
	`{"query":"q","chunks":[{"id":"a"},{"id":"a"}]}`, `{"query":"q","chunks":[{"id":"c2"},{}]}`,
	`{"query":"q","chunks":[{"id":""}]}`, `{"query":"q","chunks":[null]}`, `{"query":"q","chunks":{}}`,
	`{"query":"q","chunks":[{"scores":{"vector":1.5}}]}`, `{"query":"q","chunks":[{"scores":{"bm25":-1}}]}`,
	`{"query":"q","chunks":[{"scores":{"vector":"1"}}]}`, `{"query":"q","chunks":[{"scores":{"cosine":1}}]}`,
	`{"query":"q","chunks":[{"trust":1.01}]}`, `{"query":"q","chunks":[{"untrusted":1}]}`,
	`{"query":"q","chunks":[{"updated_at":"2023-02-29T00:00:00Z"}]}`, `{"query":"q","now":"yesterday"}`,
	`{"query":"q","chunks":[{"embedding":[]}]}`, `{"query":"q","chunks":[{"embedding":[1,"2"]}]}`,
	`{"query":"q","query_embedding":[1,2],"chunks":[{"embedding":[1]}]}`,
	`{"query":"q","chunks":[{"embedding":[1]}],"query_embedding":[1,2]}`,
	`{"query":"q","chunks":[{"text":"x","scores":{"vector":1e400}}]}`, `{"query":"q","chunks":[{"temperature":01}]}`,
	`{"query":"q","chunks":[{"text":"\ud800"}]}`, `{"query":"q","chunks":[{"text":"\udc00"}]}`,
	`{"query":"q","chunks":[{"text":"\ud800\u0041"}]}`, `{"query":"q","chunks":[{"text":"\x"}]}`,
	"{\"query\":\"q\",\"chunks\":[{\"text\":\"\x01\"}]}", "{\"query\":\"q\xff\"}", "{\"query\":\"\xed\xa0\x80\"}",
	`{"query":"q","chunks":[{"metadata":[[[[[[[[[[1]]]]]]]]]]}]}`,
	`{"query":"q","results_per_query":[null]}`, `{"query":"q","results_per_query":[[],[],[]]}`,
	`{"query":"q","chunks":[{"id":"a","metadata":{"k":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}}]}`,
	`{"query":"q","chunks":[{"text":"0123456789012345678901234567890123456789x"}]}`,
	`{"query":"q","chunks":[{"text":"012345678901234567890123456789"},{"text":"012345678901234567890123456789x"}]}`,
	`{"query":"q","chunks":[{},{},{},{}]}`, `{"query":"q","chunk":[]}`, `{"query":"q","chunks":[{"Text":"x"}]}`,
}

func TestDecodeDirectMatchesTree(t *testing.T) {
	var m requestMemory
	for _, lim := range directLimits {
		for _, c := range directCases {
			checkDirect(t, []byte(c), lim, &m)
		}
	}
	for _, n := range []int{1, 20, 40} {
		checkDirect(t, benchRequest(n), nil, &m)
	}
	// The hostile requests (internal/hostile, at 256 KiB): metadata of
	// many keys, keys and ids built to collide, deep nesting, escapes.
	for _, c := range hostile.Cases(256 << 10) {
		if c.Op == "evaluate" {
			checkDirect(t, c.Body, nil, &m)
		}
	}
}

// The direct decoder must take the valid requests itself, or the speed-up
// is lost silently: every golden request, the codec benchmark's request,
// and the valid cases above.
func TestDecodeDirectTakesValidRequests(t *testing.T) {
	var m requestMemory
	files, _ := filepath.Glob(filepath.Join(goldenRoot, "requests", "*", "*.json"))
	if len(files) == 0 {
		t.Fatal("no golden requests")
	}
	inputs := map[string][]byte{"bench20": benchRequest(20), "bench40": benchRequest(40)}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = b
	}
	for i, c := range directCases[:8] {
		inputs["case"+string(rune('0'+i))] = []byte(c)
	}
	for name, b := range inputs {
		var ps jsonx.Parser
		if _, err := decodeRequestTree(&ps, append([]byte(nil), b...), nil, false); err != nil {
			continue // a golden error case
		}
		if !checkDirect(t, b, nil, &m) {
			t.Errorf("%s: valid, but the direct decoder gave up", name)
		}
	}
}

// The engine-owned Request is reused: a second decode must not leak
// anything from the first (stale chunks, scores, embeddings, strings).
func TestDecodeDirectEngineReuse(t *testing.T) {
	e, err := NewEngine(nil)
	if err != nil {
		t.Fatal(err)
	}
	big := `{"query":"first","now":"2024-05-01T12:00:00Z","query_embedding":[1,2],"chunks":[{"id":"a","title":"T","text":"long text","scores":{"vector":0.5,"bm25":3},"trust":0.5,"untrusted":true,"embedding":[3,4],"temperature":2,"updated_at":"2023-01-01T00:00:00Z"},{"id":"b"}],"results_per_query":[[{"id":"x"}]]}`
	small := `{"query":"second","chunks":[{"text":"t"}]}`
	for _, s := range []string{big, small, big, small} {
		got, err := e.DecodeRequestInPlace([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		want, err := DecodeRequest([]byte(s), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("engine-owned decode of %s:\n got %+v\nwant %+v", s, got, want)
		}
	}
}

// In steady state the engine's decode allocates nothing: the point of the
// engine-owned Request (TinyGo's collector, docs/performance.md).
func TestDecodeInPlaceAllocatesNothing(t *testing.T) {
	e, err := NewEngine(nil)
	if err != nil {
		t.Fatal(err)
	}
	// directCases[4] without its 1e-400: strconv's slow path for extreme
	// exponents allocates under TinyGo (not this decoder, and not a real score).
	full := strings.Replace(directCases[4], "1e-400", "1e-4", 1)
	reqs := [][]byte{benchRequest(20), benchRequest(40), []byte(full), []byte(directCases[5])}
	buf := make([]byte, 0, 64<<10)
	run := func() {
		for _, r := range reqs {
			buf = append(buf[:0], r...)
			if _, err := e.DecodeRequestInPlace(buf); err != nil {
				t.Fatal(err)
			}
		}
	}
	run() // warm up: the engine's memory grows to the largest request
	if n := mallocs(20, run); n != 0 {
		t.Errorf("DecodeRequestInPlace allocates %v times per %d requests in steady state, want 0", n, len(reqs))
	}
}

// mallocs is testing.AllocsPerRun from the runtime's counters, because
// TinyGo's AllocsPerRun always returns 0 and this test matters most there
// (tinygo test -c -target wasip1 ./gate, run under any WASI runtime).
func mallocs(runs int, f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < runs; i++ {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.Mallocs - before.Mallocs) / uint64(runs)
}

// FuzzDecodeDirect is the differential fuzz target: the direct decoder
// against the tree decoder under three limit sets, with one engine memory
// reused across inputs as a guest reuses it.
func FuzzDecodeDirect(f *testing.F) {
	for _, c := range directCases {
		f.Add([]byte(c))
	}
	f.Add(benchRequest(2))
	var m requestMemory
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lim := range directLimits {
			checkDirect(t, data, lim, &m)
		}
	})
}

// The engine-owned path (a guest's), beside BenchmarkDecodeRequest20InPlace
// (caller-owned): the difference is the allocation of the Request.
func BenchmarkEngineDecodeInPlace20(b *testing.B) {
	e, err := NewEngine(nil)
	if err != nil {
		b.Fatal(err)
	}
	data := benchRequest(20)
	buf := make([]byte, len(data))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ { // not b.Loop: TinyGo lacks it
		copy(buf, data)
		if _, err := e.DecodeRequestInPlace(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// A caller-owned Request shares nothing with the input or with the next
// decode: overwriting both leaves it as it was.
func TestDecodeDirectCallerOwned(t *testing.T) {
	data := benchRequest(30)
	want, err := DecodeRequest(append([]byte(nil), data...), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, inPlace := range []bool{false, true} {
		buf := append([]byte(nil), data...)
		var got *Request
		if inPlace {
			got, err = DecodeRequestInPlace(buf, nil)
		} else {
			got, err = DecodeRequest(buf, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range buf {
			buf[i] = 'x'
		}
		if _, err := DecodeRequest(benchRequest(3), nil); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("in place %v: the Request changed with its input", inPlace)
		}
	}
}

// The engine's memory is reused, not accumulated (embeddings once grew it
// on every call), and what a huge request left behind is dropped when small
// requests follow.
func TestDecodeDirectEngineMemoryBounded(t *testing.T) {
	e, err := NewEngine(nil)
	if err != nil {
		t.Fatal(err)
	}
	emb := "[" + strings.Repeat("0.25,", 383) + "0.5]"
	small := []byte(`{"query":"q","query_embedding":` + emb + `,"chunks":[{"text":"t","embedding":` + emb + `}]}`)
	decode := func(b []byte) {
		t.Helper()
		if _, err := e.DecodeRequestInPlace(append([]byte(nil), b...)); err != nil {
			t.Fatal(err)
		}
	}
	decode(small)
	kept := e.reqMem.kept
	for i := 0; i < 50; i++ {
		decode(small)
	}
	if e.reqMem.kept != kept {
		t.Fatalf("memory kept grew from %d to %d bytes over 50 equal requests", kept, e.reqMem.kept)
	}
	big := []byte(`{"query":"q","chunks":[{"text":"` + strings.Repeat("x", 60<<10) + `"}` + strings.Repeat(`,{"text":"`+strings.Repeat("y", 60<<10)+`"}`, 11) + `]}`)
	decode(big)
	if e.reqMem.kept < 12*60<<10 {
		t.Fatalf("big request: %d bytes kept", e.reqMem.kept)
	}
	decode(small)
	if e.reqMem.kept > retainBytes {
		t.Fatalf("after a small request %d bytes are still kept", e.reqMem.kept)
	}
}

// parseNumber must give exactly strconv.ParseFloat's bits, and accept
// exactly jsonx's number grammar: scores as retrievers print them (16-17
// significant digits), the fast paths' edges (2^53, 1e22, 19 digits, the
// table's exponents -64..64) and what lies past them (ParseFloat).
func TestParseNumberMatchesParseFloat(t *testing.T) {
	for _, s := range []string{"0", "-0", "0.0", "1", "-1", "0.1", "0.2", "0.3", "0.8234567891234", "123456789012345",
		"1234567890123456", "0.000000000000000000001", "0.0000000000000000000001", "20.5", "0.0163", "-37.5",
		"999999999999999", "0.999999999999999", "9007199254740993", "3.141592653589793", "1.7976931348623157",
		"0.8909168243408203", "0.86511623859405518", "12.345678901234567", "9007199254740992", "9007199254740991.5",
		"18446744073709551615", "1844674407370955161", "9999999999999999999", "0.00000000000000000000000000000001234567",
		"1e22", "1e23", "1E-5", "-2.5e-05", "1.2345678901234567e-64", "1.2345678901234567e-65", "9.87654321e64",
		"9.87654321e65", "1e308", "1.7976931348623157e308", "1.7976931348623159e308", "1e309", "1e-400", "-1e-400",
		"4.9e-324", "2.2250738585072011e-308", "2.2250738585072014e-308", "0.1e1", "00", "01", "-", "-a", ".5", "5.",
		"1e", "1e+", "1.5e+3", "1.5E-0003", "123456789012345678901234567890", "0.000000000000000000000000000000000000000000001",
		"7.038531e-26", "1.00000000000000011102230246251565404236316680908203125", "9223372036854775807", "4503599627370497.5"} {
		checkParseNumber(t, s)
	}
}

// checkParseNumber compares parseNumber on s (as a whole JSON value) with
// the jsonx grammar and strconv.ParseFloat.
func checkParseNumber(t *testing.T, s string) {
	t.Helper()
	if strings.Trim(s, " \t\n\r") != s {
		return // jsonx takes white space around a value; parseNumber is called past it
	}
	v, perr := jsonx.Parse([]byte(s), 4)
	isNum := perr == nil && v.Kind() == jsonx.Number // an overflow is an error
	f, end, ok := parseNumber([]byte(s), 0)
	if whole := ok && end == len(s); whole != isNum {
		t.Fatalf("parseNumber(%q) = %v, end %d, ok %v; jsonx: %v", s, f, end, ok, perr)
	}
	if !isNum {
		return
	}
	want, _ := strconv.ParseFloat(s, 64)
	if math.Float64bits(f) != math.Float64bits(want) {
		t.Fatalf("parseNumber(%q) = %v (%x), ParseFloat %v (%x)", s, f, math.Float64bits(f), want, math.Float64bits(want))
	}
}

// FuzzSimpleFloat builds decimals (up to 20 digits, up to 23 after the
// point, an optional exponent) for parseNumber against ParseFloat.
func FuzzSimpleFloat(f *testing.F) {
	f.Add(uint64(8234567891234), uint8(13), false)
	f.Add(uint64(5), uint8(1), true)
	f.Add(uint64(86511623859405518), uint8(17), false)
	f.Fuzz(func(t *testing.T, mant uint64, frac uint8, neg bool) {
		s := strconv.FormatUint(mant, 10)
		if k := int(frac % 24); k > 0 {
			for len(s) <= k {
				s = "0" + s
			}
			s = s[:len(s)-k] + "." + s[len(s)-k:]
		}
		if neg {
			s = "-" + s
		}
		if frac >= 128 {
			s += "e" + strconv.Itoa(int(frac%96)-48)
		}
		checkParseNumber(t, s)
	})
}

// FuzzParseNumber is parseNumber on any text against jsonx and ParseFloat.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"0", "-0.5", "1e5", "0.86511623859405518", "1.2e-70", "01", "1.", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkParseNumber(t, s)
	})
}

// The packed field names (decode_direct.go) are their names' bytes.
func TestFieldWords(t *testing.T) {
	pack := func(s string) (w0, w1 uint64) {
		for i := 0; i < len(s) && i < 16; i++ {
			if i < 8 {
				w0 |= uint64(s[i]) << (8 * i)
			} else {
				w1 |= uint64(s[i]) << (8 * (i - 8))
			}
		}
		return
	}
	for _, c := range []struct {
		name   string
		w0, w1 uint64
		f      int
	}{
		{"query", wQuery, 0, fQuery}, {"chunks", wChunks, 0, fChunks},
		{"query_embedding", wQueryEmb0, wQueryEmb1, fQueryEmbedding},
		{"results_per_query", wResults0, wResults1, fResults}, {"now", wNow, 0, fNow},
		{"id", wID, 0, fID}, {"doc_id", wDocID, 0, fDocID}, {"title", wTitle, 0, fTitle},
		{"text", wText, 0, fText}, {"scores", wScores, 0, fScores}, {"updated_at", wUpdated0, wUpdated1, fUpdated},
		{"trust", wTrust, 0, fTrust}, {"untrusted", wUntrusted0, wUntrusted1, fUntrusted},
		{"embedding", wEmbedding0, wEmbedding1, fEmbedding}, {"temperature", wTemp0, wTemp1, fTemperature},
		{"metadata", wMetadata, 0, fMetadata}, {"vector", wVector, 0, fVector}, {"bm25", wBM25, 0, fBM25},
		{"rerank", wRerank, 0, fRerank}, {"rrf", wRRF, 0, fRRF}, {"boosted", wBoosted, 0, fBoosted},
		{"graph", wGraph, 0, fGraph},
		{"sparse", wSparse, 0, fSparse},
	} {
		if w0, w1 := pack(c.name); w0 != c.w0 || w1 != c.w1 {
			t.Errorf("%s: words %#x %#x, want %#x %#x", c.name, c.w0, c.w1, w0, w1)
		}
		d := directDecoder{src: []byte(` "` + c.name + `" : 1`)}
		if f := d.field(); f != c.f || d.src[d.pos] != '1' {
			t.Errorf("field(%q) = %d at %d, want %d", c.name, f, d.pos, c.f)
		}
	}
	for _, s := range []string{`"quer":`, `"querys":`, `"results_per_querx":`, `"results_per_queryy":`, `"metadatas":`,
		`"id"`, `"id" 1`, `"i\u0064":`, "\"id\x01\":", `"idé":`, `"`} {
		d := directDecoder{src: []byte(s)}
		if f := d.field(); f != fNone {
			t.Errorf("field(%s) = %d, want none", s, f)
		}
	}
}

// Strings with every kind of stop byte at every offset around the
// scanner's 16-byte blocks, alone and in runs: escapes, runs of escapes,
// two-, three- and four-byte UTF-8, invalid UTF-8, control bytes, a missing
// closing quote. Each must decode as the tree decoder does.
func TestDecodeDirectStringEdges(t *testing.T) {
	var m requestMemory
	stops := []string{`\n`, `\n\n`, `\"`, `\\`, `\/`, `\u00e9`, `\ud83d\ude00`, `\u0000`, `\ud800`, `\x`,
		"é", "éé", "Ã©â", "€", "😀", "\xc3", "\xc0\x80", "\xc2\x41", "\xed\xa0\x80", "\xe2\x82", "\x01", "\x7f", "\t", `"`}
	for _, stop := range stops {
		for off := 0; off < 40; off++ {
			text := strings.Repeat("abcdefgh", 6)[:off] + stop + strings.Repeat("x", off%19)
			for _, doc := range []string{
				`{"query":"q","chunks":[{"id":"a","text":"` + text + `"}]}`,
				`{"query":"` + text + `"}`,
				`{"query":"q","chunks":[{"id":"a","text":"` + text, // no closing quote
			} {
				for _, lim := range directLimits[:1] {
					checkDirect(t, []byte(doc), lim, &m)
				}
			}
		}
	}
}
