package jsonread

import (
	"testing"

	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/gate/wire"
)

func TestPathString(t *testing.T) {
	tests := []struct {
		p    Path
		want string
	}{
		{Root, ""},
		{Root.Key("query"), "query"},
		{Root.Key("chunks").Index(3), "chunks[3]"},
		{Root.Key("chunks").Index(3).Key("scores").Key("vector"), "chunks[3].scores.vector"},
		{Root.Key("results_per_query").Index(1).Index(4).Key("id"), "results_per_query[1][4].id"},
		{Root.Key("signals").Key("weights").Key("coverage"), "signals.weights.coverage"},
		{Root.Key("chunks").Index(0).Key("embedding").Index(7), "chunks[0].embedding[7]"},
	}
	for _, tc := range tests {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("Path = %q, want %q", got, tc.want)
		}
	}
}

func TestListed(t *testing.T) {
	const list = "id doc_id title"
	for k, want := range map[string]bool{"id": true, "doc_id": true, "title": true, "": false, "doc": false, "i": false, "title ": false, "d doc_id": false, "titles": false} {
		if got := Listed(list, k); got != want {
			t.Errorf("Listed(%q) = %v, want %v", k, got, want)
		}
	}
}

func TestObjReaders(t *testing.T) {
	v, err := jsonx.Parse([]byte(`{"s":"x","n":1.5,"b":true,"a":[1,2],"o":{"k":"v"},"z":null,"bad":[1,"x"]}`), 8)
	if err != nil {
		t.Fatal(err)
	}
	o, e := AsObject(&v, Root.Key("policy"), wire.CodeBadPolicy)
	if e != nil {
		t.Fatal(e)
	}
	if s, ok, e := o.Str("s", true); s != "x" || !ok || e != nil {
		t.Errorf("str: %q %v %v", s, ok, e)
	}
	if n, ok, e := o.Num("n", true); n != 1.5 || !ok || e != nil {
		t.Errorf("num: %v %v %v", n, ok, e)
	}
	if b, ok, e := o.Bool("b", false); !b || !ok || e != nil {
		t.Errorf("boolean: %v %v %v", b, ok, e)
	}
	if sub, ok, e := o.Object("o", true); !ok || e != nil || sub.at.String() != "policy.o" {
		t.Errorf("object: %v %v %q", ok, e, sub.at.String())
	}
	if _, ok, e := o.Str("missing", false); ok || e != nil {
		t.Errorf("optional missing: %v %v", ok, e)
	}
	if _, ok, e := o.Str("z", false); ok || e != nil {
		t.Errorf("optional null counts as absent: %v %v", ok, e)
	}
	a, _, _ := o.Arr("a", true)
	if xs, e := Numbers(a, o.at.Key("a"), wire.CodeBadPolicy, nil); e != nil || len(xs) != 2 || xs[1] != 2 {
		t.Errorf("numbers: %v %v", xs, e)
	}

	errs := []struct {
		name       string
		e          *Error
		field, msg string
	}{
		{"required missing", second(o.Str("missing", true)), "policy.missing", "is required"},
		{"required null", second(o.Str("z", true)), "policy.z", "is required"},
		{"wrong type string", second(o.Str("n", true)), "policy.n", "must be a string"},
		{"wrong type number", second(o.Num("s", true)), "policy.s", "must be a number"},
		{"wrong type bool", second(o.Bool("s", true)), "policy.s", "must be true or false"},
		{"wrong type array", second(o.Arr("o", true)), "policy.o", "must be an array"},
		{"wrong type object", third(o.Object("a", true)), "policy.a", "must be an object"},
		{"unknown field", o.Strict("s n b a o z"), "policy.bad", "unknown field"},
		{"array element", func() *Error {
			b, _, _ := o.Arr("bad", true)
			_, e := Numbers(b, o.at.Key("bad"), wire.CodeBadPolicy, nil)
			return e
		}(), "policy.bad[1]", "must be a number"},
		{"string element", func() *Error {
			_, e := Strs(a, o.at.Key("a"), wire.CodeBadPolicy)
			return e
		}(), "policy.a[0]", "must be a string"},
	}
	for _, tc := range errs {
		if tc.e == nil || tc.e.Code != wire.CodeBadPolicy || tc.e.Field != tc.field || tc.e.Message != tc.msg {
			t.Errorf("%s: got %+v, want bad_policy %q %q", tc.name, tc.e, tc.field, tc.msg)
		}
	}
	if e := o.Strict("s n b a o z bad"); e != nil {
		t.Errorf("strict with every key listed: %v", e)
	}
	if _, e := AsObject(a, Root.Key("x"), wire.CodeBadField); e == nil || e.Field != "x" || e.Message != "must be an object" {
		t.Errorf("asObject on array: %+v", e)
	}
}

func second[A, B any](_ A, _ B, e *Error) *Error { return e }
func third[A, B any](_ A, _ B, e *Error) *Error  { return e }

func TestParseJSONErrors(t *testing.T) {
	if _, e := ParseJSON([]byte(`{"a":`), 4); e == nil || e.Code != wire.CodeBadJSON || e.Message != "invalid JSON at offset 5: expected a value, found end of input" {
		t.Errorf("syntax: %+v", e)
	}
	if _, e := Parse([]byte(`[[[]]]`), jsonx.Limits{MaxDepth: 2}, "", true); e == nil || e.Code != wire.CodeLimit || e.Message != "JSON nesting deeper than 2 levels at offset 2 (max_depth)" {
		t.Errorf("depth: %+v", e)
	}
	if _, e := Parse([]byte(`[1,2,3]`), jsonx.Limits{MaxValues: 2}, "why", false); e == nil || e.Code != wire.CodeLimit || e.Message != "JSON has more than 2 values at offset 4 (why)" {
		t.Errorf("values: %+v", e)
	}
}
