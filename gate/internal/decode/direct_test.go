package decode

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/gate/wire"
	"github.com/ctxgate/ctxgate/internal/hostile"
)

// The direct decoder (direct.go) must agree with the tree decoder
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
func checkDirect(t *testing.T, data []byte, lim *Limits, m *Memory) bool {
	t.Helper()
	var ps jsonx.Parser
	want, werr := decodeRequestTree(&ps, append([]byte(nil), data...), lim, false)

	l := lim.Resolved()
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
	`{"vector_metric":"l2_squared","query":"q","rerank_scale":"logit","chunks":[{"scores":{"vector":0.31,"rerank":-2.5}}]}`,
	`{"query":"q","vector_metric":"dot","chunks":[{"scores":{"vector":101.9}},{"scores":{"vector":-3e2}}]}`,
	`{"query":"q","vector_metric":null,"rerank_scale":null}`,
	`{"query":"q","vector_metric":"cosine_distance","rerank_scale":"probability"}`,
	`{"query":"q","vector_metric":"negative_dot","chunks":[{"scores":{"vector":-0.8}}]}`,
	`{"query":"q","vector_metric":"l2","chunks":[{"scores":{"vector":0}}]}`,
	`{"query":"q","vector_metric":"cosine"}`,
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
	`{"query":"q","vector_metric":"euclid"}`, `{"query":"q","vector_metric":"Cosine"}`, `{"query":"q","rerank_scale":"odds"}`,
	`{"query":"q","vector_metric":"dot","vector_metric":"dot"}`, `{"query":"q","vector_metric":3}`, `{"query":"q","rerank_scale":true}`,
	`{"query":"q","vector_metric":"d\u006ft"}`, `{"query":"q","vector_metric":""}`,
}

func TestDecodeDirectMatchesTree(t *testing.T) {
	var m Memory
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
	var m Memory
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
		req, err := decodeRequestTree(&ps, append([]byte(nil), b...), nil, false)
		if err != nil {
			continue // a golden error case
		}
		if _, ok := wire.ParseVectorMetric(string(req.VectorMetric)); !ok && req.VectorMetric != "" {
			continue // an unknown name: the direct decoder leaves it to the tree decoder, the engine refuses it
		}
		if !checkDirect(t, b, nil, &m) {
			t.Errorf("%s: valid, but the direct decoder gave up", name)
		}
	}
}

// The engine-owned Request is reused: a second decode must not leak
// anything from the first (stale chunks, scores, embeddings, strings).
func TestDecodeDirectEngineReuse(t *testing.T) {
	var m Memory
	big := `{"query":"first","now":"2024-05-01T12:00:00Z","query_embedding":[1,2],"chunks":[{"id":"a","title":"T","text":"long text","scores":{"vector":0.5,"bm25":3},"trust":0.5,"untrusted":true,"embedding":[3,4],"temperature":2,"updated_at":"2023-01-01T00:00:00Z"},{"id":"b"}],"results_per_query":[[{"id":"x"}]]}`
	small := `{"query":"second","chunks":[{"text":"t"}]}`
	for _, s := range []string{big, small, big, small} {
		got, err := m.Decode([]byte(s), nil, true)
		if err != nil {
			t.Fatal(err)
		}
		want, werr := DecodeRequest([]byte(s), nil)
		if werr != nil {
			t.Fatal(werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("engine-owned decode of %s:\n got %+v\nwant %+v", s, got, want)
		}
	}
}

// In steady state the engine's decode allocates nothing: the point of the
// engine-owned Request (TinyGo's collector, docs/performance.md).
func TestDecodeInPlaceAllocatesNothing(t *testing.T) {
	var m Memory
	// directCases[4] without its 1e-400: strconv's slow path for extreme
	// exponents allocates under TinyGo (not this decoder, and not a real score).
	full := strings.Replace(directCases[4], "1e-400", "1e-4", 1)
	reqs := [][]byte{benchRequest(20), benchRequest(40), []byte(full), []byte(directCases[5])}
	buf := make([]byte, 0, 64<<10)
	run := func() {
		for _, r := range reqs {
			buf = append(buf[:0], r...)
			if _, err := m.Decode(buf, nil, true); err != nil {
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
	var m Memory
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lim := range directLimits {
			checkDirect(t, data, lim, &m)
		}
	})
}

// The engine-owned path (a guest's), beside BenchmarkDecodeRequest20InPlace
// (caller-owned): the difference is the allocation of the Request.
func BenchmarkEngineDecodeInPlace20(b *testing.B) {
	var m Memory
	data := benchRequest(20)
	buf := make([]byte, len(data))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ { // not b.Loop: TinyGo lacks it
		copy(buf, data)
		if _, err := m.Decode(buf, nil, true); err != nil {
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
	var m Memory
	emb := "[" + strings.Repeat("0.25,", 383) + "0.5]"
	small := []byte(`{"query":"q","query_embedding":` + emb + `,"chunks":[{"text":"t","embedding":` + emb + `}]}`)
	decode := func(b []byte) {
		t.Helper()
		if _, err := m.Decode(append([]byte(nil), b...), nil, true); err != nil {
			t.Fatal(err)
		}
	}
	decode(small)
	kept := m.kept
	for i := 0; i < 50; i++ {
		decode(small)
	}
	if m.kept != kept {
		t.Fatalf("memory kept grew from %d to %d bytes over 50 equal requests", kept, m.kept)
	}
	big := []byte(`{"query":"q","chunks":[{"text":"` + strings.Repeat("x", 60<<10) + `"}` + strings.Repeat(`,{"text":"`+strings.Repeat("y", 60<<10)+`"}`, 11) + `]}`)
	decode(big)
	if m.kept < 12*60<<10 {
		t.Fatalf("big request: %d bytes kept", m.kept)
	}
	decode(small)
	if m.kept > retainBytes {
		t.Fatalf("after a small request %d bytes are still kept", m.kept)
	}
}

// Every member name reads as its field code, and near misses as none.
func TestFieldWords(t *testing.T) {
	for f, name := range fieldNames {
		if f == fNone {
			continue
		}
		d := directDecoder{src: []byte(` "` + name + `" : 1`)}
		if got := d.field(); got != f || d.src[d.pos] != '1' {
			t.Errorf("field(%q) = %d at %d, want %d", name, got, d.pos, f)
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
	var m Memory
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
