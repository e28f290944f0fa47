package jsonx

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParse: Parse never panics; what it accepts encoding/json accepts too
// (jsonx is the stricter of the two); re-encoding is stable: the compact and
// canonical forms reparse to the same canonical bytes; a reused Parser,
// after another document, gives the same bytes, within countNodes' bound.
func FuzzParse(f *testing.F) {
	var ps Parser
	for _, s := range []string{
		`{"query":"q","chunks":[{"id":"a","scores":{"vector":0.5}}]}`,
		`[1,-0,1e5,1.5E-3,"a\u00e9\ud83d\ude00\n",true,false,null,{}]`,
		`{"b":{"z":1,"a":[{}]},"a":"<&>\u2028"}`,
		`"\ud800"`, `{"a":1,"a":2}`, `1e400`, "\"\xff\"", `[[[[[[[[]]]]]]]]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data, 16)
		ps.Parse([]byte(`{"warm":[1,"x",{"y":[]}]}`), Limits{})
		pv, perr := ps.Parse(data, Limits{MaxDepth: 16})
		if (err == nil) != (perr == nil) {
			t.Fatalf("Parse error %v, reused Parser error %v", err, perr)
		}
		if err == nil && !bytes.Equal(AppendValue(nil, pv), AppendValue(nil, &v)) {
			t.Fatal("reused Parser gives different bytes")
		}
		if err == nil && len(ps.d.nodes) > countNodes(data, 0, 16, "") {
			t.Fatalf("%d nodes, countNodes %d", len(ps.d.nodes), countNodes(data, 0, 16, ""))
		}
		checkSkip(t, data, "a", Limits{MaxDepth: 16})
		checkCheckOnly(t, data, Limits{MaxDepth: 16})
		checkSkip(t, data, "metadata", Limits{MaxDepth: 16, MaxValues: 40})
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error type %T", err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("jsonx accepted what encoding/json rejects: %q", data)
		}
		compact := AppendValue(nil, &v)
		canon := AppendCanonical(nil, &v)
		for _, out := range [][]byte{compact, canon} {
			v2, err := Parse(out, 16)
			if err != nil {
				t.Fatalf("re-encoded output does not parse: %s: %v", out, err)
			}
			if c2 := AppendCanonical(nil, &v2); !bytes.Equal(c2, canon) {
				t.Fatalf("canonical form not stable:\n%s\n%s", canon, c2)
			}
		}
		if again := AppendValue(nil, &v); !bytes.Equal(again, compact) {
			t.Fatal("AppendValue not deterministic")
		}
	})
}
