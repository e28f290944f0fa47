package server

import (
	"bytes"
	"strings"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// The server reads JSON it already knows is valid (a request the gate has
// just accepted, or a decision the core wrote) with the core's walker,
// jsonx.WalkObject: it does not validate, finds where each value ends, and
// finds a string's end with bytes.IndexByte, which matters because the
// values skipped are the large ones (the chunk texts of a request, the
// prompt of a decision). On invalid JSON its answers are merely unspecified
// (callers that may see such input check what they read, as readDecision
// does).

// walkMembers calls fn with each member of the object b: its raw name
// (between the quotes, escapes not decoded) and its raw value. It returns
// false when b is not an object it can walk, or a name has an escape (the
// walk does not decode names; the callers then use the parser).
func walkMembers(b []byte, fn func(key, val []byte)) bool {
	escaped := false
	end := jsonx.WalkObject(b, jsonx.SkipSpace(b, 0), func(k []byte, _, v jsonx.Span) {
		if escaped = escaped || bytes.IndexByte(k, '\\') >= 0; !escaped {
			fn(k, b[v.Start:v.End])
		}
	})
	return end >= 0 && !escaped
}

// walkElements calls fn with each element of the array b. It returns false
// when b is not an array it can walk.
func walkElements(b []byte, fn func(val []byte)) bool {
	return jsonx.WalkArray(b, jsonx.SkipSpace(b, 0), func(v jsonx.Span) { fn(b[v.Start:v.End]) }) >= 0
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
