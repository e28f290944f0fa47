package jsonx

import "bytes"

// A walker over JSON already known to be valid: a document Parse accepted
// (the gateway's chat body, a request the gate decided), or one the gate
// wrote (a decision). It does not validate; it finds where each value ends
// so that a reader can take the few members it needs and skip the rest, and
// a writer can splice a document without re-serializing it (gate/chat). It
// finds a string's end with bytes.IndexByte instead of a byte loop, because
// the values skipped are the large ones: the chunk texts of a request and
// the prompt of a decision. On any input it stays in bounds and never
// panics (its loops are iterative: nesting costs no stack); on invalid JSON
// its answers are merely unspecified (FuzzWalk holds it to Parse on valid
// documents).

// Span is the half-open byte range [Start, End) of one value in a document.
type Span struct{ Start, End int }

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space (len(b) when there is none).
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// WalkObject calls fn with each member of the object that starts at b[i]
// ('{', no white space before it): its raw name (between the quotes,
// escapes not decoded), the span of the whole member (name, colon and
// value) and the span of its value. It returns the index after the object,
// or -1 when there is no object at i it can walk; fn may then have seen
// some members. fn may be nil.
func WalkObject(b []byte, i int, fn func(name []byte, member, value Span)) int {
	if i < 0 || i >= len(b) || b[i] != '{' {
		return -1
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		kStart := i
		kEnd := stringEnd(b, i)
		if kEnd < 0 {
			return -1
		}
		i = SkipSpace(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return -1
		}
		vStart := SkipSpace(b, i+1)
		vEnd := ValueEnd(b, vStart)
		if vEnd < 0 {
			return -1
		}
		if fn != nil {
			fn(b[kStart+1:kEnd-1], Span{kStart, vEnd}, Span{vStart, vEnd})
		}
		i = SkipSpace(b, vEnd)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case '}':
			return i + 1
		case ',':
			i = SkipSpace(b, i+1)
		default:
			return -1
		}
	}
}

// WalkArray calls fn with the span of each element of the array that
// starts at b[i] ('['). It returns the index after the array, or -1 as
// WalkObject does. fn may be nil.
func WalkArray(b []byte, i int, fn func(value Span)) int {
	if i < 0 || i >= len(b) || b[i] != '[' {
		return -1
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		end := ValueEnd(b, i)
		if end < 0 {
			return -1
		}
		if fn != nil {
			fn(Span{i, end})
		}
		i = SkipSpace(b, end)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ']':
			return i + 1
		case ',':
			i = SkipSpace(b, i+1)
		default:
			return -1
		}
	}
}

// ValueEnd returns the index after the value that starts at b[i] (no white
// space before it), or -1. Containers are skipped by counting brackets
// outside strings.
func ValueEnd(b []byte, i int) int {
	if i < 0 || i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = stringEnd(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	// A number, true, false or null: up to the next delimiter.
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\n', '\r', '\t':
			return j
		}
		j++
	}
	return j
}

// stringEnd returns the index after the closing quote of the string that
// starts at b[i] == '"', or -1. A quote ends the string when an even number
// of backslashes precedes it.
func stringEnd(b []byte, i int) int {
	j := i + 1
	for j < len(b) {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
	return -1
}
