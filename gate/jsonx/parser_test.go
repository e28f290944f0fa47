package jsonx

import (
	"strings"
	"testing"
)

// parserDocs covers every kind of value, nesting, escapes, empty containers
// and sizes on both sides of the arena's retain threshold.
var parserDocs = []string{
	`{"query":"q","chunks":[{"id":"a","text":"x\"y\u00e9","scores":{"vector":0.5}},{"id":"b"}]}`,
	`[]`,
	`{}`,
	`[[],{},[[]],{"a":{}}]`,
	`"just a string with \\ and \/"`,
	`-0.0e+0`,
	`true`,
	`null`,
	`{"k,e:y[":"v{a,l:u]e","":""}`,
	`{"a":[` + strings.Repeat(`1.5,`, 70000) + `2]}`, // more nodes than retainNodes
	`{"s":[` + strings.Repeat(`"a\"b",`, 3000) + `"c"]}`,
	`{"n":{"m":{"o":[1,{"p":[true,false,null]}]}}}`,
}

func TestCountNodesIsAnUpperBound(t *testing.T) {
	for _, doc := range parserDocs {
		var ps Parser
		v, err := ps.Parse([]byte(doc), Limits{})
		if err != nil {
			t.Fatalf("%.40s: %v", doc, err)
		}
		if got, bound := len(ps.d.nodes), countNodes([]byte(doc), 0, 0, ""); got > bound {
			t.Errorf("%.40s: %d nodes, countNodes says at most %d", doc, got, bound)
		}
		if v.d != ps.d {
			t.Errorf("%.40s: root not tied to its document", doc)
		}
	}
}

// TestParserReuse parses one document after another with one Parser, in
// place and copied, with errors in between, and checks each result against
// a fresh Parse. Values from earlier parses stay safe to call (they read the
// new document's memory, but never panic).
func TestParserReuse(t *testing.T) {
	var ps Parser
	var stale []*Value
	for round := 0; round < 3; round++ {
		for i, doc := range parserDocs {
			want, err := Parse([]byte(doc), 0)
			if err != nil {
				t.Fatal(err)
			}
			var got *Value
			if i%2 == 0 {
				got, err = ps.Parse([]byte(doc), Limits{})
			} else {
				got, err = ps.ParseInPlace([]byte(doc), Limits{})
			}
			if err != nil {
				t.Fatalf("round %d, %.40s: %v", round, doc, err)
			}
			if g, w := string(AppendValue(nil, got)), string(AppendValue(nil, &want)); g != w {
				t.Fatalf("round %d, %.40s: reused parser gives %.80s, want %.80s", round, doc, g, w)
			}
			for _, s := range stale {
				s.Str()
				s.Raw()
				s.Get("a").Index(0).Key(0)
				s.Member(0).Len()
				AppendValue(nil, s)
			}
			stale = append(stale, got, got.Index(0), got.Member(0), got.Get("a").Index(1))
			if _, err := ps.Parse([]byte(`{"a":[1,2,`), Limits{}); err == nil {
				t.Fatal("truncated document parsed")
			}
			if _, err := ps.Parse([]byte(`{"a":1,"a":2}`), Limits{}); err == nil {
				t.Fatal("duplicate key parsed")
			}
		}
	}
}

// TestParserDropsOversizedArena: one huge document does not leave its arena
// behind for good, but a stream of them keeps it.
func TestParserDropsOversizedArena(t *testing.T) {
	big := []byte(`[` + strings.Repeat(`0,`, 2*retainNodes) + `0]`)
	var ps Parser
	for i := 0; i < 2*dropAfter; i++ {
		if _, err := ps.Parse(big, Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	kept := cap(ps.d.nodes)
	if kept <= retainNodes {
		t.Fatalf("arena %d after big documents", kept)
	}
	if _, err := ps.Parse(big, Limits{}); err != nil || cap(ps.d.nodes) != kept {
		t.Fatalf("a stream of big documents reallocated the arena: %d -> %d", kept, cap(ps.d.nodes))
	}
	for i := 0; i <= dropAfter; i++ {
		if _, err := ps.Parse([]byte(`{"a":[1,2,3]}`), Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	if c := cap(ps.d.nodes); c > retainNodes {
		t.Fatalf("arena still %d nodes after %d small documents", c, dropAfter+1)
	}
}

// TestParserGrow forces the arena's fallback growth (countNodes makes it
// unreachable otherwise) with open containers on the stack.
func TestParserGrow(t *testing.T) {
	for _, doc := range parserDocs {
		want, err := Parse([]byte(doc), 0)
		if err != nil {
			t.Fatal(err)
		}
		d := &document{src: []byte(doc)}
		p := parser{d: d, src: d.src, values: 1, buf: make([]Value, 1), top: 1}
		v, perr := p.parse(&Parser{})
		if perr != nil {
			t.Fatalf("%.40s: %v", doc, perr)
		}
		d.nodes = p.buf[:p.front]
		v.d = d
		if g, w := string(AppendValue(nil, &v)), string(AppendValue(nil, &want)); g != w {
			t.Fatalf("%.40s: grown arena gives %.80s, want %.80s", doc, g, w)
		}
	}
}

// TestParseAllocations: a warm Parser allocates nothing for a document no
// larger than the last, and a fresh parse allocates the copy, the document
// header, the arena and the frame stack only.
func TestParseAllocations(t *testing.T) {
	doc := []byte(parserDocs[0])
	var ps Parser
	if _, err := ps.Parse(doc, Limits{}); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { ps.Parse(doc, Limits{}) }); n != 0 {
		t.Errorf("warm Parser.Parse: %v allocations, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { Parse(doc, 0) }); n > 4 {
		t.Errorf("Parse: %v allocations, want at most 4", n)
	}
}

// TestTooDeepNeedsNoArena: a document refused for its depth gets no arena
// sized by everything after the refusal. 1 MiB of '[' had a 16 MiB arena
// allocated before the parse failed at level 33, and a TinyGo module whose
// heap had grown took seconds to find room for it, or trapped.
func TestTooDeepNeedsNoArena(t *testing.T) {
	for _, doc := range []string{
		strings.Repeat("[", 1<<20),
		`{"a":` + strings.Repeat(`{"b":[`, 1<<17),
		strings.Repeat("[", 31) + strings.Repeat("0,", 1000) + "0" + strings.Repeat("]", 31), // within the limit: all counted
	} {
		var ps Parser
		_, err := ps.Parse([]byte(doc), Limits{MaxDepth: 32})
		if n := countNodes([]byte(doc), 0, 32, ""); n > 2000 {
			t.Errorf("%.20s... (%d bytes): countNodes = %d", doc, len(doc), n)
		}
		if c := cap(ps.d.nodes); c > 2048 {
			t.Errorf("%.20s... (%d bytes): an arena of %d nodes (err %v)", doc, len(doc), c, err)
		}
	}
}

// skipRef writes v as AppendValue does, with the array or object value of
// every member named skip written as null: what a parse with Limits.Skip
// must give.
func skipRef(dst []byte, v *Value, skip string) []byte {
	switch v.Kind() {
	case Array:
		dst = append(dst, '[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = skipRef(dst, v.Index(i), skip)
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, v.Key(i))
			dst = append(dst, ':')
			if m := v.Member(i); v.Key(i) == skip && (m.Kind() == Array || m.Kind() == Object) {
				dst = append(dst, "null"...)
			} else {
				dst = skipRef(dst, m, skip)
			}
		}
		return append(dst, '}')
	}
	return AppendValue(dst, v)
}

// checkSkip: a parse with Limits.Skip gives the same error as one without
// (offset and message: everything in a skipped value is still checked), or
// the same tree with skipped values null, in an arena countNodes bounds.
func checkSkip(t *testing.T, doc []byte, skip string, lim Limits) {
	t.Helper()
	full, ferr := ParseWith(doc, lim)
	var ps Parser
	sl := lim
	sl.Skip = skip
	got, err := ps.Parse(doc, sl)
	if (ferr == nil) != (err == nil) || ferr != nil && ferr.Error() != err.Error() {
		t.Fatalf("%.60q: error %v with Skip, %v without", doc, err, ferr)
	}
	if err != nil {
		return
	}
	if g, w := AppendValue(nil, got), skipRef(nil, &full, skip); string(g) != string(w) {
		t.Fatalf("%.60q: with Skip %s, want %s", doc, g, w)
	}
	if n, bound := len(ps.d.nodes), countNodes(doc, 0, lim.MaxDepth, skip); n > bound {
		t.Fatalf("%.60q: %d nodes, countNodes %d", doc, n, bound)
	}
}

func TestParseSkip(t *testing.T) {
	docs := append([]string{
		`{"metadata":{"a":1,"b":[1,{"c":2}]},"x":1}`,
		`{"metadata":{"a":1,"a":2}}`,
		`{"metadata":[{"k":1,"k":2}],"x":{"k":1,"k":2}}`,
		`{"x":{"metadata":[1,2,3],"metadata":4}}`,
		`{"metadata":"a string","m":{"metadata":{}}}`,
		`[{"metadata":[[[[[[[[1]]]]]]]]}]`,
		`{"metad\u0061ta":{"a":[1,2]}}`,
		`{"metadata":{"a":[1,2,{"metadata":{"b":1}}]}}`,
		`{"metadata":[1,2,3,4,5,6,7,8,9,10,11]}`,
		`{"metadata":{` + strings.Repeat(`"k":1,`, 3) + `"z":1}}`,
		`{"metadata":[1,2,}`,
		`{"metadata":{"a" 1}}`,
		`{"metadata" : [ "\"metadata\":[" ] }`,
	}, parserDocs...)
	for _, d := range docs {
		checkCheckOnly(t, []byte(d), Limits{MaxDepth: 8})
		checkSkip(t, []byte(d), "metadata", Limits{MaxDepth: 8})
		checkSkip(t, []byte(d), "metadata", Limits{MaxDepth: 8, MaxValues: 12})
		checkSkip(t, []byte(d), "a", Limits{})
	}
}

// checkCheckOnly: a CheckOnly parse gives the same error as a full one, and
// null (or the scalar) for a valid document, in an arena of its keys.
func checkCheckOnly(t *testing.T, doc []byte, lim Limits) {
	t.Helper()
	full, ferr := ParseWith(doc, lim)
	var ps Parser
	cl := lim
	cl.CheckOnly = true
	got, err := ps.Parse(doc, cl)
	if (ferr == nil) != (err == nil) || ferr != nil && ferr.Error() != err.Error() {
		t.Fatalf("%.60q: error %v with CheckOnly, %v without", doc, err, ferr)
	}
	if err != nil {
		return
	}
	want := "null"
	if k := full.Kind(); k != Array && k != Object {
		want = string(AppendValue(nil, &full))
	}
	if g := string(AppendValue(nil, got)); g != want {
		t.Fatalf("%.60q: CheckOnly gives %s, want %s", doc, g, want)
	}
	if n, bound := len(ps.d.nodes), countKeys(doc); n > bound+1 {
		t.Fatalf("%.60q: %d nodes, countKeys %d", doc, n, bound)
	}
}
