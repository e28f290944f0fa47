package jsonx

import (
	"strings"
	"testing"
)

var walkSeeds = []string{
	`{}`, `[]`, `{"a":1}`, ` { "a" : [1, {"b":"c\"}"}] , "d\u0065":null,"e":-0.5e+3 } `,
	`{"s":"\\","t":true,"f":false,"n":[[],{}]}`, `{"x":"\ud83d\ude00"}`,
	`[1, "two", {"3": [4]}, [[]], null]`, `{"a\\":"\\\\\"","b":["]","}"]}`,
}

// The walker agrees with Parse about every document Parse accepts: at every
// level, the same members and elements in the same order, each name the
// same once decoded, each value span parsing to the same value, and the end
// of each container where Parse's ends.
func FuzzWalk(f *testing.F) {
	for _, s := range walkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Parse(b, 32)
		if err != nil {
			return
		}
		start := SkipSpace(b, 0)
		end := checkWalk(t, b, start, &v)
		if SkipSpace(b, end) != len(b) {
			t.Fatalf("%q: the walk ends at %d of %d", b, end, len(b))
		}
	})
}

func TestWalkSeeds(t *testing.T) {
	for _, s := range walkSeeds {
		b := []byte(s)
		v, err := Parse(b, 32)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if end := checkWalk(t, b, SkipSpace(b, 0), &v); SkipSpace(b, end) != len(b) {
			t.Fatalf("%s: the walk ends at %d", s, end)
		}
	}
}

// checkWalk compares the walk of the value at b[i] with v, recursively, and
// returns where the value ends.
func checkWalk(t *testing.T, b []byte, i int, v *Value) int {
	t.Helper()
	end := ValueEnd(b, i)
	if end < 0 {
		t.Fatalf("%q: no value end at %d", b, i)
	}
	sub, err := Parse(b[i:end], 32)
	if err != nil || string(AppendValue(nil, &sub)) != string(AppendValue(nil, v)) {
		t.Fatalf("%q: the span %q is not the value (%v)", b, b[i:end], err)
	}
	switch v.Kind() {
	case Object:
		n := 0
		oend := WalkObject(b, i, func(name []byte, member, value Span) {
			if n >= v.Len() {
				t.Fatalf("%q: the walk finds more members than Parse", b)
			}
			k, err := Parse([]byte(`"`+string(name)+`"`), 1)
			if err != nil || k.Str() != v.Key(n) {
				t.Fatalf("%q: member %d is %q, Parse says %q", b, n, name, v.Key(n))
			}
			if member.Start >= value.Start || member.End != value.End || b[member.Start] != '"' {
				t.Fatalf("%q: member %d spans %v, its value %v", b, n, member, value)
			}
			checkWalk(t, b, value.Start, v.Member(n))
			n++
		})
		if n != v.Len() || oend != end {
			t.Fatalf("%q: the walk finds %d members ending at %d; Parse %d, %d", b, n, oend, v.Len(), end)
		}
	case Array:
		n := 0
		aend := WalkArray(b, i, func(value Span) {
			if n >= v.Len() {
				t.Fatalf("%q: the walk finds more elements than Parse", b)
			}
			checkWalk(t, b, value.Start, v.Index(n))
			n++
		})
		if n != v.Len() || aend != end {
			t.Fatalf("%q: the walk finds %d elements ending at %d; Parse %d, %d", b, n, aend, v.Len(), end)
		}
	}
	return end
}

// On anything, valid or not, the walker stays in bounds and never panics.
func TestWalkInvalid(t *testing.T) {
	for _, s := range []string{``, `{`, `{"a`, `{"a":`, `{"a":1`, `{"a":1,`, `[`, `[1,`, `["\`, `{"a" 1}`,
		`{1:2}`, `[1 2]`, `"`, strings.Repeat("[", 100), `{"a":[}`, `}`} {
		b := []byte(s)
		ValueEnd(b, 0)
		WalkObject(b, 0, func([]byte, Span, Span) {})
		WalkArray(b, 0, func(Span) {})
		if WalkObject(b, len(b), nil) != -1 || WalkArray(b, -1, nil) != -1 || ValueEnd(b, len(b)) != -1 {
			t.Fatalf("%q: out-of-range start accepted", s)
		}
	}
}
