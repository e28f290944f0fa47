package server

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ctxgate/ctxgate/gate/chat"
	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/internal/testgolden"
)

// The readers before walk.go, kept as the reference the fast readers are
// compared with: the core's parser (jsonx) for every member read, and for
// the top level the document validated by the parser, then split into its
// members by the walker (jsonx.FuzzWalk holds the walker to the parser).

// readDecisionRef is readDecision before walk.go.
func readDecisionRef(b []byte, withPrompt bool) (*decisionView, error) {
	d := &decisionView{}
	var bad error
	parse := func(val []byte, depth int) *jsonx.Value {
		v, err := jsonx.Parse(val, depth)
		if err != nil {
			bad = err
			return nil
		}
		return &v
	}
	ok := eachTopMemberRef(b, func(key, val []byte) {
		switch string(key) {
		case "action":
			d.Action = parse(val, 1).Str()
		case "level":
			d.Level = parse(val, 1).Str()
		case "band":
			d.Band = parse(val, 1).Str()
		case "confidence":
			d.Confidence = json.Number(val)
		case "caveat":
			d.Caveat = parse(val, 1).Str()
		case "signals":
			if val[0] == '{' {
				d.Signals = append([]byte(nil), val...)
			}
		case "chunks":
			cs := parse(val, 4)
			d.Chunks = make([]chunkView, cs.Len())
			for i := range d.Chunks {
				c := cs.Index(i)
				d.Chunks[i] = chunkView{ID: c.Get("id").Str(), DocID: c.Get("doc_id").Str(), Tag: c.Get("tag").Str(),
					Reason: c.Get("reason").Str(), Kept: c.Get("kept").Bool(), Score: json.Number(c.Get("score").Raw())}
			}
		case "prompt":
			if withPrompt && val[0] == '{' {
				p := parse(val, 2)
				d.Prompt = &promptView{p.Get("instructions").Str(), p.Get("sources").Str(), p.Get("minimal").Str()}
			}
		case "refusal":
			if val[0] == '{' {
				r := parse(val, 2)
				d.Refusal = &refusalView{r.Get("type").Str(), r.Get("message").Str()}
			}
		case "confidence_factors":
			fs := parse(val, 2)
			d.ConfidenceFactors = make([]string, fs.Len())
			for i := range d.ConfidenceFactors {
				d.ConfidenceFactors[i] = fs.Index(i).Str()
			}
		case "gap_event":
			if val[0] == '{' {
				d.GapEvent = append([]byte(nil), val...)
			}
		case "policy":
			p := parse(val, 2)
			d.Policy = policyRef{p.Get("name").Str(), p.Get("version").Str(), p.Get("sha256").Str()}
		}
	})
	switch {
	case !ok:
		return nil, errString("the gate returned a decision that is not a JSON object")
	case bad != nil:
		return nil, bad
	case d.Action == "":
		return nil, errBadDecision
	}
	return d, nil
}

// requestQueryRef is requestQuery before walk.go.
func requestQueryRef(body []byte) (string, []byte) {
	var query, emb []byte
	ok := eachTopMemberRef(body, func(key, val []byte) {
		switch string(key) {
		case "query":
			query = val
		case "query_embedding":
			if len(val) > 2 && val[0] == '[' {
				if emb = chat.AppendCompact(nil, val); len(emb) == 2 {
					emb = nil
				}
			}
		}
	})
	if !ok {
		return requestQuerySlow(body)
	}
	if len(query) < 2 || query[0] != '"' {
		return "", emb
	}
	v, err := jsonx.Parse(query, 1)
	if err != nil {
		return "", emb
	}
	return v.Str(), emb
}

// eachTopMemberRef walks the top-level members of a document the parser
// accepts; false for any other, and for a key with escapes.
func eachTopMemberRef(b []byte, fn func(key, val []byte)) bool {
	if _, err := jsonx.Parse(b, 64); err != nil {
		return false
	}
	escaped := false
	ok := chat.EachMember(b, func(key, val []byte) {
		if escaped = escaped || bytes.IndexByte(key, '\\') >= 0; !escaped {
			fn(key, val)
		}
	})
	return ok && !escaped
}

// walkSamples are the golden requests and decisions, and awkward shapes.
func walkSamples(t testing.TB) [][]byte {
	cases, err := testgolden.Load(filepath.Join("..", "..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, c := range cases {
		out = append(out, c.Request)
	}
	for _, c := range cases {
		if c.Decision != nil {
			out = append(out, c.Decision)
		}
	}
	if len(out) == 0 {
		t.Fatal("no golden requests or decisions")
	}
	return append(out,
		[]byte(`{"chunks":[{"text":"a \\"}]\\" b"}],"query":"why \u00e9?","query_embedding":[0.1, 0.2]}`),
		[]byte(` { "x" : {"a":[1,{"b":"]"}]} , "query" : "q\\\\" } `),
		[]byte(`{"action":"inject","chunks":[{"id":"a\\\\","kept":true,"score":-1e-3},7,{"id":"b"}],"policy":{"name":"p\\u0041"}}`),
		[]byte(`{"action":"caveat","confidence_factors":["x","y\\n"],"refusal":{"type":"hard"},"gap_event":{"kind":"k"},"prompt":{"sources":"s"}}`),
		[]byte(`{"action":"refuse","chunks":"none","confidence_factors":7,"policy":[]}`),
	)
}

// TestWalkMatchesReference: the fast walk reads every golden decision and
// request exactly as the parser-based reference does.
func TestWalkMatchesReference(t *testing.T) {
	read := 0
	for _, b := range walkSamples(t) {
		if compareWalk(t, b) {
			read++
		}
	}
	// Every golden decision (not the golden errors) and the three
	// decision-shaped samples.
	cases, err := testgolden.Load(filepath.Join("..", "..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	decisions := 0
	for i := range cases {
		if cases[i].Decision != nil && !cases[i].IsError() {
			decisions++
		}
	}
	if read < decisions+3 {
		t.Fatalf("the reference read %d decisions, want at least %d: the comparison compared too little", read, decisions+3)
	}
}

// compareWalk fails when the fast reader and the reference disagree on b.
// Where the reference rejects b, the fast reader (which does not validate)
// may read something: such input never reaches it (the gate accepted the
// request; the core wrote the decision).
// It reports whether the reference read b as a decision.
func compareWalk(t *testing.T, b []byte) (decision bool) {
	t.Helper()
	for _, withPrompt := range []bool{false, true} {
		want, werr := readDecisionRef(b, withPrompt)
		if werr != nil || !listsAreArrays(b) {
			continue
		}
		decision = true
		got, err := readDecision(b, withPrompt)
		if err != nil {
			t.Fatalf("%.200q: fast reader: %v; reference read it", b, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%.200q: fast reader\n%+v\nreference\n%+v", b, got, want)
		}
	}
	// A request reaches requestQuery only once the gate has parsed it.
	if _, err := jsonx.Parse(b, 64); err == nil {
		wq, we := requestQueryRef(b)
		if q, e := requestQuery(b); q != wq || !bytes.Equal(e, we) {
			t.Fatalf("%.200q: query %q %s, reference %q %s", b, q, e, wq, we)
		}
	}
	return decision
}

// listsAreArrays reports whether b's chunks and confidence_factors are not
// objects (the core writes arrays). The reference read an object there as
// that many empty entries; the fast reader reads none.
func listsAreArrays(b []byte) bool {
	ok := true
	eachTopMemberRef(b, func(key, val []byte) {
		if k := string(key); (k == "chunks" || k == "confidence_factors") && val[0] == '{' {
			ok = false
		}
	})
	return ok
}

func FuzzWalk(f *testing.F) {
	for _, b := range walkSamples(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		compareWalk(t, b)
	})
}
