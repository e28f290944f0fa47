package jsonx

import (
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	tests := []struct {
		in, compact string
	}{
		{`null`, `null`},
		{` true `, `true`},
		{"\t\r\nfalse\n", `false`},
		{`0`, `0`},
		{`-0`, `-0`},
		{`-0.0e+0`, `-0.0e+0`},
		{`1.5E-3`, `1.5E-3`},
		{`12345678901234567890`, `12345678901234567890`},
		{`1e-400`, `1e-400`}, // underflow: kept raw, value 0
		{`""`, `""`},
		{`"a\"b\\c\/d\b\f\n\r\t"`, `"a\"b\\c/d\b\f\n\r\t"`},
		{`"\u00e9\u4e2d\ud83d\ude00"`, `"é中😀"`},
		{`"\u0000"`, `"\u0000"`},
		{`"é中😀"`, `"é中😀"`},
		{`[]`, `[]`},
		{`[ 1 , [ 2 , [ ] ] , { } ]`, `[1,[2,[]],{}]`},
		{`{"b":1,"a":{"c":[true,null]}}`, `{"b":1,"a":{"c":[true,null]}}`},
		{`{"a":1,"A":2}`, `{"a":1,"A":2}`}, // keys are case-sensitive: not duplicates
		{`"<&>"`, `"\u003c\u0026\u003e"`},
	}
	for _, tc := range tests {
		v, err := Parse([]byte(tc.in), 32)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := string(AppendValue(nil, &v)); got != tc.compact {
			t.Errorf("Parse(%q) re-encoded = %s, want %s", tc.in, got, tc.compact)
		}
	}
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		name, in string
		offset   int
		msg      string // substring of the message
		deep     bool
	}{
		{"empty", ``, 0, "expected a value, found end of input", false},
		{"whitespace only", "  \n", 3, "end of input", false},
		{"bare word", `nul`, 0, "invalid literal", false},
		{"trailing data", `{} x`, 3, "expected end of input", false},
		{"two values", `1 2`, 2, "expected end of input", false},
		{"trailing comma array", `[1,]`, 3, "expected a value, found ']'", false},
		{"trailing comma object", `{"a":1,}`, 7, "expected a string key", false},
		{"missing colon", `{"a" 1}`, 5, "expected ':'", false},
		{"single quotes", `{'a':1}`, 1, "expected a string key", false},
		{"unterminated array", `[1`, 2, "found end of input", false},
		{"unterminated object", `{"a":1`, 6, "found end of input", false},
		{"wrong closer", `[1}`, 2, "expected ',' or ']'", false},
		{"unterminated string", `"abc`, 4, "unterminated string", false},
		{"raw newline in string", "\"a\nb\"", 2, "control character", false},
		{"invalid escape", `"\x"`, 2, "invalid escape", false},
		{"short unicode escape", `"\u12"`, 3, "4 hex digits", false},
		{"invalid utf8", "\"a\xffb\"", 2, "invalid UTF-8", false},
		{"invalid utf8 after escape", "\"\\n\xc3\"", 3, "invalid UTF-8", false},
		{"overlong utf8", "\"\xc0\xaf\"", 1, "invalid UTF-8", false},
		{"utf8 surrogate bytes", "\"\xed\xa0\x80\"", 1, "invalid UTF-8", false},
		{"lone high surrogate", `"\ud800"`, 7, "lone high surrogate", false},
		{"high then non-low", `"\ud800\u0041"`, 7, "lone high surrogate", false},
		{"lone low surrogate", `"\udc00"`, 1, "lone low surrogate", false},
		{"duplicate key", `{"a":1,"b":2,"a":3}`, 0, `duplicate key "a"`, false},
		{"nested duplicate key", `{"x":{"k":1,"k":1}}`, 5, `duplicate key "k"`, false},
		{"overflow", `[1e400]`, 1, "overflows float64", false},
		{"negative overflow", `-1e309`, 0, "overflows float64", false},
		{"leading zero", `01`, 1, "leading zero", false},
		{"plus sign", `+1`, 0, "expected a value", false},
		{"bare dot", `1.`, 2, "after '.'", false},
		{"leading dot", `.5`, 0, "expected a value", false},
		{"empty exponent", `1e`, 2, "exponent", false},
		{"NaN", `NaN`, 0, "expected a value", false},
		{"Infinity", `[Infinity]`, 1, "expected a value", false},
		{"hex", `0x10`, 1, "expected end of input", false},
		{"control byte found", "\x01", 0, "byte 0x01", false},
		{"too deep", `[[[1]]]`, 2, "nesting deeper than 2", true},
		{"too deep object", `{"a":{"b":{}}}`, 10, "nesting deeper than 2", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in), 2)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded, want error", tc.in)
			}
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("error type %T, want *Error", err)
			}
			if e.Offset != tc.offset || !strings.Contains(e.Msg, tc.msg) || e.TooDeep != tc.deep {
				t.Errorf("Parse(%q) = offset %d %q deep=%v, want offset %d containing %q deep=%v",
					tc.in, e.Offset, e.Msg, e.TooDeep, tc.offset, tc.msg, tc.deep)
			}
		})
	}
}

func TestParseDepthLimitExact(t *testing.T) {
	for _, depth := range []int{1, 5, 32} {
		ok := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		if _, err := Parse([]byte(ok), depth); err != nil {
			t.Errorf("depth %d at limit %d: %v", depth, depth, err)
		}
		bad := "[" + ok + "]"
		if _, err := Parse([]byte(bad), depth); err == nil || !err.(*Error).TooDeep {
			t.Errorf("depth %d at limit %d: err = %v, want TooDeep", depth+1, depth, err)
		}
	}
	// No limit: a deep document costs heap, not stack.
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	if _, err := Parse([]byte(deep), 0); err != nil {
		t.Errorf("unlimited depth: %v", err)
	}
}

func TestParseManyKeysDuplicate(t *testing.T) {
	// Over 16 members the duplicate check switches to a map; both paths must agree.
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 100; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1`)
	}
	ok := b.String() + "}"
	if _, err := Parse([]byte(ok), 4); err != nil {
		t.Fatalf("100 distinct keys: %v", err)
	}
	bad := b.String() + `,"kzc":2,"kzc":3}`
	_, err := Parse([]byte(bad), 4)
	if err == nil || !strings.Contains(err.Error(), `duplicate key "kzc"`) {
		t.Fatalf("duplicate among many keys: err = %v", err)
	}
}

func TestValueAccessors(t *testing.T) {
	v, err := Parse([]byte(`{"s":"x\ny","n":-2.50,"b":true,"a":[1,"two",null],"o":{}}`), 8)
	if err != nil {
		t.Fatal(err)
	}
	if v.Kind() != Object || v.Len() != 5 {
		t.Fatalf("kind %v len %d", v.Kind(), v.Len())
	}
	if v.Key(1) != "n" || v.Member(1).Raw() != "-2.50" || v.Member(1).Float() != -2.5 {
		t.Errorf("member 1 = %q %q %v", v.Key(1), v.Member(1).Raw(), v.Member(1).Float())
	}
	if v.Get("s").Str() != "x\ny" || !v.Get("b").Bool() {
		t.Errorf("s=%q b=%v", v.Get("s").Str(), v.Get("b").Bool())
	}
	a := v.Get("a")
	if a.Len() != 3 || a.Index(0).Float() != 1 || a.Index(1).Str() != "two" || !a.Index(2).IsNull() {
		t.Errorf("array accessors wrong: %s", AppendValue(nil, a))
	}
	// Out-of-range and wrong-kind lookups are nil/zero, never a panic.
	var nilv *Value
	if a.Index(3) != nil || a.Index(-1) != nil || v.Get("missing") != nil || nilv.Get("x") != nil ||
		v.Index(0) != nil || a.Key(0) != "" || a.Member(0) != nil || v.Key(9) != "" || v.Member(-1) != nil ||
		nilv.Len() != 0 || nilv.Kind() != Null || nilv.Str() != "" || nilv.Raw() != "" || nilv.Float() != 0 || nilv.Bool() {
		t.Error("out-of-range accessor returned something")
	}
	if v.Get("o").Kind() != Object || v.Get("o").Len() != 0 {
		t.Error("empty object")
	}
}

func TestParseDoesNotAliasInput(t *testing.T) {
	buf := []byte(`{"k":"value"}`)
	v, err := Parse(buf, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] = 'x'
	}
	if v.Get("k").Str() != "value" {
		t.Errorf("value changed with the input buffer: %q", v.Get("k").Str())
	}
}

func TestUnderflowIsZero(t *testing.T) {
	v, err := Parse([]byte(`[1e-400,-1e-400,4.9e-324]`), 4)
	if err != nil {
		t.Fatal(err)
	}
	if v.Index(0).Float() != 0 || v.Index(1).Float() != 0 || v.Index(2).Float() == 0 {
		t.Errorf("underflow values: %v %v %v", v.Index(0).Float(), v.Index(1).Float(), v.Index(2).Float())
	}
}

func TestParseInPlaceMatchesParse(t *testing.T) {
	for _, in := range []string{
		`{"a":"x\ny\u00e9\ud83d\ude00 tail","b":[1,"\"q\"",{"c":"plain"}],"d":"é\t"}`,
		string(benchDoc(3)),
	} {
		v1, err1 := Parse([]byte(in), 8)
		buf := []byte(in)
		v2, err2 := ParseInPlace(buf, 8)
		if err1 != nil || err2 != nil {
			t.Fatalf("%v %v", err1, err2)
		}
		if a, b := AppendValue(nil, &v1), AppendValue(nil, &v2); string(a) != string(b) {
			t.Errorf("ParseInPlace differs:\n%s\n%s", a, b)
		}
	}
	if _, err := ParseInPlace([]byte(`{"a":"\ud800"}`), 8); err == nil {
		t.Error("ParseInPlace accepted a lone surrogate")
	}
}

func TestParseMaxValues(t *testing.T) {
	tests := []struct {
		in  string
		max int
		ok  bool
	}{
		{`[1,2,3]`, 4, true}, // the array and its three elements
		{`[1,2,3]`, 3, false},
		{`{"a":1}`, 3, true}, // object, key, value
		{`{"a":1}`, 2, false},
		{`1`, 1, true},
		{`[[],[],[]]`, 4, true},
		{`[[],[],[]]`, 3, false},
		{`[0,0,0,0,0,0,0,0]`, 0, true}, // 0: no limit
	}
	for _, tc := range tests {
		_, err := ParseWith([]byte(tc.in), Limits{MaxValues: tc.max})
		if (err == nil) != tc.ok {
			t.Errorf("ParseWith(%s, max %d) err = %v, want ok=%v", tc.in, tc.max, err, tc.ok)
		}
		if err != nil && !err.(*Error).TooMany {
			t.Errorf("ParseWith(%s): TooMany not set: %v", tc.in, err)
		}
		_, err2 := ParseInPlaceWith([]byte(tc.in), Limits{MaxValues: tc.max})
		if (err2 == nil) != tc.ok {
			t.Errorf("ParseInPlaceWith(%s, max %d) err = %v", tc.in, tc.max, err2)
		}
	}
}
