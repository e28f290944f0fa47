package server

import (
	"bytes"
	"strings"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// A walker over JSON the server already knows is valid: a request the gate
// has just accepted, or a decision the core wrote. It does not validate; it
// finds where each value ends, and finds a string's end with
// bytes.IndexByte (vectorised) instead of a byte loop, which matters because
// the values skipped are the large ones: the chunk texts of a request and
// the prompt of a decision. On any input it stays in bounds and never
// panics; on invalid JSON its answers are merely unspecified (callers that
// may see such input check what they read, as readDecision does).

// walkMembers calls fn with each member of the object b: its raw name
// (between the quotes, escapes not decoded) and its raw value. It returns
// false when b is not an object it can walk, or a name has an escape (the
// walk does not decode names; the callers then use the parser).
func walkMembers(b []byte, fn func(key, val []byte)) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		kEnd := stringEnd(b, i)
		if kEnd < 0 {
			return false
		}
		key := b[i+1 : kEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipWS(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		vStart := skipWS(b, i+1)
		vEnd := valueEnd(b, vStart)
		if vEnd < 0 {
			return false
		}
		fn(key, b[vStart:vEnd])
		i = skipWS(b, vEnd)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case '}':
			return true
		case ',':
			i = skipWS(b, i+1)
		default:
			return false
		}
	}
}

// walkElements calls fn with each element of the array b. It returns false
// when b is not an array it can walk.
func walkElements(b []byte, fn func(val []byte)) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return true
	}
	for {
		end := valueEnd(b, i)
		if end < 0 {
			return false
		}
		fn(b[i:end])
		i = skipWS(b, end)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ']':
			return true
		case ',':
			i = skipWS(b, i+1)
		default:
			return false
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
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

// valueEnd returns the index after the value that starts at b[i], or -1.
// Containers are skipped by counting brackets outside strings.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
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

// stringValue decodes the raw JSON string val ("" when val is not a string).
// A string without escapes is copied as is (the common case: no parse); one
// with escapes goes through the core's parser, whose error it returns. The
// result never aliases val, so it may outlive the buffer val is in.
func stringValue(val []byte) (string, error) {
	if len(val) < 2 || val[0] != '"' {
		return "", nil
	}
	if bytes.IndexByte(val, '\\') < 0 {
		return string(val[1 : len(val)-1]), nil
	}
	v, err := jsonx.Parse(val, 1)
	if err != nil {
		return "", err
	}
	return strings.Clone(v.Str()), nil
}
