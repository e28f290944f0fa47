package chat

import (
	"testing"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// The splicer must agree with jsonx about every document jsonx accepts: the
// same members, in the same order, names equal once keyIs decodes them, with
// values that re-parse to the same bytes. FuzzScannerAgreesWithJSONX checks
// it; the seeds cover the shapes (jsonx.FuzzWalk checks the walk itself at
// every level).
func FuzzScannerAgreesWithJSONX(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1}`, ` { "a" : [1, {"b":"c\"}"}] , "d\u0065":null,"e":-0.5e+3 } `,
		`{"s":"\\","t":true,"f":false,"n":[[],{}]}`, `{"x":"\ud83d\ude00"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := jsonx.Parse(b, 32)
		if err != nil || v.Kind() != jsonx.Object {
			return
		}
		start := skipSpace(b, 0)
		i := 0
		end := eachMember(b, start, func(k []byte, _, val span) {
			if i >= v.Len() {
				t.Fatalf("scanner found more members than jsonx")
			}
			if !keyIs(k, v.Key(i)) {
				t.Fatalf("member %d: scanner key %q, jsonx key %q", i, k, v.Key(i))
			}
			sub, err := jsonx.Parse(b[val.Start:val.End], 32)
			if err != nil {
				t.Fatalf("member %d: span %q does not parse: %v", i, b[val.Start:val.End], err)
			}
			if string(jsonx.AppendValue(nil, &sub)) != string(jsonx.AppendValue(nil, v.Member(i))) {
				t.Fatalf("member %d: span value differs", i)
			}
			i++
		})
		if end < 0 {
			t.Fatalf("scanner rejects a document jsonx accepts")
		}
		if i != v.Len() {
			t.Fatalf("scanner found %d members, jsonx %d", i, v.Len())
		}
		if skipSpace(b, end) != len(b) {
			t.Fatalf("scanner ends at %d of %d", end, len(b))
		}
	})
}

// FuzzChat checks that no body makes Parse, ParseResponses, GateRequest,
// Rewrite or UserField panic, and that every rewrite is valid JSON without the raw
// documents or the extension field.
func FuzzChat(f *testing.F) {
	f.Add([]byte(`{"messages":[{"role":"user","content":"q"}],"documents":[{"id":"a"}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"q"}]}],"ctxgate":{"chunks":[]}}`))
	f.Add([]byte(`{"messages":[],"documents":[],"x":{"documents":1}}`))
	f.Add([]byte(`{"messages":[{"role":"us\u0065r","content":"q"}],"x":{"docs":[]},"documents":[]}`))
	f.Add([]byte(`{"input":"q","documents":[{"id":"a"}]}`))
	f.Add([]byte(`{"input":[{"role":"user","content":[{"type":"input_text","text":"q"}]}],"ctxgate":{"chunks":[]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, docs := range [][]string{{"documents"}, {"x", "docs"}, nil} {
			for _, parse := range []func([]byte, []string, []string) (*Chat, error){Parse, ParseResponses} {
				fuzzChat(t, b, docs, parse)
			}
		}
	})
}

// fuzzChat is one body through one parser (chat or Responses API).
func fuzzChat(t *testing.T, b []byte, docs []string, parse func([]byte, []string, []string) (*Chat, error)) {
	c, err := parse(b, docs, nil)
	if err != nil {
		return
	}
	if _, err := jsonx.Parse(c.GateRequest(nil), 0); err != nil {
		t.Fatalf("gate request is not JSON: %v\nin: %s", err, b)
	}
	_ = c.UserField(&gate.Error{Code: gate.CodeBadField, Field: "chunks[0].text"})
	_ = c.QueryText()
	_ = c.AppendQueryEmbedding(nil)
	for _, out := range [][]byte{c.Rewrite(nil, "sys <sources>", "", false), c.Rewrite(nil, "", "min", true)} {
		v, err := jsonx.Parse(out, 0)
		if err != nil {
			t.Fatalf("rewrite is not JSON: %v\nin:  %s\nout: %s", err, b, out)
		}
		if v.Get(ExtensionField) != nil || (len(docs) == 1 && v.Get("documents") != nil) ||
			(len(docs) == 2 && v.Get("x").Get("docs") != nil) {
			t.Fatalf("rewrite kept the documents: %s", out)
		}
	}
}

// EachMember is the exported top-level walk hosts use (host/server): raw
// names and raw values in order, false for anything that is not an object.
func TestEachMember(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string // name=value pairs
		ok   bool
	}{
		{`{}`, nil, true},
		{` { "a" : [1, {"b":"]"}] , "q\u0065":"x\"}" } `, []string{`a=[1, {"b":"]"}]`, `q\u0065="x\"}"`}, true},
		{`{"n":-1.5e3,"t":true,"z":null}`, []string{`n=-1.5e3`, `t=true`, `z=null`}, true},
		{`[1]`, nil, false},
		{``, nil, false},
		{`{"a":1`, []string{`a=1`}, false},
		{`{"a" 1}`, nil, false},
	} {
		var got []string
		ok := EachMember([]byte(c.in), func(name, value []byte) { got = append(got, string(name)+"="+string(value)) })
		if ok != c.ok || len(got) != len(c.want) {
			t.Errorf("%q: ok %v members %q, want ok %v members %q", c.in, ok, got, c.ok, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: member %d %q, want %q", c.in, i, got[i], c.want[i])
			}
		}
	}
}

// TestKeyIs: a raw member name matches the name jsonx decodes from it and
// nothing else, escapes (surrogate pairs included) decoded without
// allocating: a body of many escaped names cost a parse of each.
func TestKeyIs(t *testing.T) {
	for _, raw := range []string{`documents`, `docum\u0065nts`, `\u0064ocuments`, `a\"b\\c\/d`, `\b\f\n\r\t`,
		`\ud83d\ude00x`, `\u00e9t\u00C9`, `é\u00e9`, ``, `\u0000`} {
		v, err := jsonx.Parse([]byte(`"`+raw+`"`), 1)
		if err != nil {
			t.Fatal(err)
		}
		name := v.Str()
		if !keyIs([]byte(raw), name) {
			t.Errorf("keyIs(%q, %q) = false", raw, name)
		}
		for _, other := range []string{name + "x", "x" + name, "documents"} {
			if other != name && keyIs([]byte(raw), other) {
				t.Errorf("keyIs(%q, %q) = true", raw, other)
			}
		}
		if len(name) > 0 && keyIs([]byte(raw), name[:len(name)-1]) {
			t.Errorf("keyIs(%q, a prefix) = true", raw)
		}
	}
	raw := []byte(`docum\u0065nts`)
	if n := testing.AllocsPerRun(100, func() { keyIs(raw, "documents") }); n != 0 {
		t.Errorf("keyIs allocates %v times", n)
	}
}
