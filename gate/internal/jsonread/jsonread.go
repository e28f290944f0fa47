// Package jsonread reads a parsed JSON document (jsonx) into Go fields for
// the gate's decoders (the request's tree decoder, answer validation's and
// the policy's), with errors that name the exact input path.
package jsonread

import (
	"strconv"

	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/gate/wire"
)

// Error and the error codes are the gate's (gate/wire).
type Error = wire.Error

const (
	codeBadJSON = wire.CodeBadJSON
	codeLimit   = wire.CodeLimit
)

func errorf(code, field, msg string) *Error { return wire.Errorf(code, field, msg) }

// The path-aware readers every decoder uses (request,
// answer, policy). They turn a parsed jsonx.Value into Go fields with errors
// that name the exact input path, e.g. `chunks[3].scores.vector: must be a
// number`, so a user can fix a request without reading the source.
//
// Rules shared by every decoder:
//   - unknown keys are errors (Obj.Strict), so a typo like "chunk" is never
//     silently ignored;
//   - an optional field given as JSON null counts as absent (clients in
//     Python and JavaScript often serialize missing optionals as null);
//     a required field given as null is "is required".

// path is a field path built lazily: only an error turns it into a string,
// so decoding a valid request builds no path strings for its fields. The
// path is pre[idx].post, e.g. pre "chunks", idx 3, post "scores".
type Path struct {
	pre  string
	idx  int // -1 when there is no index
	post string
}

// Root is the path of the top-level document.
var Root = Path{idx: -1}

// Key is the path of member k of the object at p.
func (p Path) Key(k string) Path {
	if p.idx < 0 {
		if p.pre == "" {
			return Path{pre: k, idx: -1}
		}
		return Path{pre: p.pre + "." + k, idx: -1}
	}
	if p.post == "" {
		return Path{pre: p.pre, idx: p.idx, post: k}
	}
	return Path{pre: p.pre, idx: p.idx, post: p.post + "." + k}
}

// Index is the path of element i of the array at p.
func (p Path) Index(i int) Path {
	if p.idx < 0 {
		return Path{pre: p.pre, idx: i}
	}
	return Path{pre: p.String(), idx: i}
}

func (p Path) String() string {
	if p.idx < 0 {
		return p.pre
	}
	s := p.pre + "[" + strconv.Itoa(p.idx) + "]"
	if p.post != "" {
		s += "." + p.post
	}
	return s
}

// Obj reads one JSON object. code is the error code for a wrong type or an
// unknown key: bad_field for requests, bad_policy for policies, bad_answer
// for answer validation.
type Obj struct {
	v    *jsonx.Value
	at   Path
	code string
}

// AsObject checks that v is an object.
func AsObject(v *jsonx.Value, at Path, code string) (Obj, *Error) {
	if v.Kind() != jsonx.Object {
		return Obj{}, TypeError(code, at, jsonx.Object)
	}
	return Obj{v: v, at: at, code: code}, nil
}

func TypeError(code string, at Path, want jsonx.Kind) *Error {
	return errorf(code, at.String(), "must be "+want.String())
}

// Fail returns an error about member key.
func (o Obj) Fail(key, msg string) *Error { return errorf(o.code, o.at.Key(key).String(), msg) }

// Strict rejects any key not listed in allowed, a space-separated list of
// names ("id doc_id title"). The first unknown key in document order is
// named, with the message "unknown field".
func (o Obj) Strict(allowed string) *Error {
	for i, n := 0, o.v.Len(); i < n; i++ {
		k := o.v.Key(i)
		if !Listed(allowed, k) {
			return o.Fail(k, "unknown field")
		}
	}
	return nil
}

// Listed reports whether k is one of the space-separated words in list.
func Listed(list, k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i+len(k) <= len(list); {
		j := i
		for j < len(list) && list[j] != ' ' {
			j++
		}
		if list[i:j] == k {
			return true
		}
		i = j + 1
	}
	return false
}

// Get returns member key, treating null as absent. A missing required member
// is an error.
func (o Obj) Get(key string, required bool) (*jsonx.Value, *Error) {
	v := o.v.Get(key)
	if v.IsNull() {
		if required {
			return nil, o.Fail(key, "is required")
		}
		return nil, nil
	}
	return v, nil
}

// Typed returns member key when it has kind k; ok is false when it is absent.
func (o Obj) Typed(key string, k jsonx.Kind, required bool) (v *jsonx.Value, ok bool, err *Error) {
	v, err = o.Get(key, required)
	if err != nil || v == nil {
		return nil, false, err
	}
	if v.Kind() != k {
		return nil, false, TypeError(o.code, o.at.Key(key), k)
	}
	return v, true, nil
}

// Str reads a string member.
func (o Obj) Str(key string, required bool) (string, bool, *Error) {
	v, ok, err := o.Typed(key, jsonx.String, required)
	return v.Str(), ok, err
}

// Num reads a number member. JSON numbers are always finite here: the parser
// rejects overflow and JSON has no NaN or Infinity.
func (o Obj) Num(key string, required bool) (float64, bool, *Error) {
	v, ok, err := o.Typed(key, jsonx.Number, required)
	return v.Float(), ok, err
}

// Bool reads a true/false member.
func (o Obj) Bool(key string, required bool) (bool, bool, *Error) {
	v, ok, err := o.Typed(key, jsonx.Bool, required)
	return v.Bool(), ok, err
}

// Arr reads an array member; iterate it with Len/Index and o.at.Key(key).index(i).
func (o Obj) Arr(key string, required bool) (*jsonx.Value, bool, *Error) {
	return o.Typed(key, jsonx.Array, required)
}

// Object reads an object member as a reader with the member's path.
func (o Obj) Object(key string, required bool) (Obj, bool, *Error) {
	v, ok, err := o.Typed(key, jsonx.Object, required)
	if !ok {
		return Obj{}, false, err
	}
	return Obj{v: v, at: o.at.Key(key), code: o.code}, true, nil
}

// Numbers reads an array of numbers (an embedding, a list of weights). The
// caller checks the length limits.
func Numbers(a *jsonx.Value, at Path, code string, dst []float64) ([]float64, *Error) {
	for i, n := 0, a.Len(); i < n; i++ {
		e := a.Index(i)
		if e.Kind() != jsonx.Number {
			return nil, TypeError(code, at.Index(i), jsonx.Number)
		}
		dst = append(dst, e.Float())
	}
	return dst, nil
}

// Strs reads an array of strings.
func Strs(a *jsonx.Value, at Path, code string) ([]string, *Error) {
	out := make([]string, 0, a.Len())
	for i, n := 0, a.Len(); i < n; i++ {
		e := a.Index(i)
		if e.Kind() != jsonx.String {
			return nil, TypeError(code, at.Index(i), jsonx.String)
		}
		out = append(out, e.Str())
	}
	return out, nil
}

// ParseJSON parses a document and maps parser errors to gate errors: a
// syntax error is bad_json with the byte offset, too deep is a limit.
func ParseJSON(data []byte, maxDepth int) (jsonx.Value, *Error) {
	return Parse(data, jsonx.Limits{MaxDepth: maxDepth}, "", false)
}

// Parse is ParseJSON with every parser limit; inPlace parses without
// copying and consumes data (jsonx.ParseInPlace). Too many values is a limit
// error too; valuesWhy names where lim.MaxValues comes from.
func Parse(data []byte, lim jsonx.Limits, valuesWhy string, inPlace bool) (jsonx.Value, *Error) {
	var ps jsonx.Parser
	v, err := ParseWith(&ps, data, lim, valuesWhy, inPlace)
	if err != nil {
		return jsonx.Value{}, err
	}
	return *v, nil
}

// ParseWith is Parse into a reused parser: the result is valid until
// ps parses again.
func ParseWith(ps *jsonx.Parser, data []byte, lim jsonx.Limits, valuesWhy string, inPlace bool) (*jsonx.Value, *Error) {
	var v *jsonx.Value
	var err error
	if inPlace {
		v, err = ps.ParseInPlace(data, lim)
	} else {
		v, err = ps.Parse(data, lim)
	}
	if err != nil {
		if e, ok := err.(*jsonx.Error); ok && e.TooDeep {
			return nil, errorf(codeLimit, "", "JSON "+e.Msg+" at offset "+strconv.Itoa(e.Offset)+" (max_depth)")
		}
		if e, ok := err.(*jsonx.Error); ok && e.TooMany {
			return nil, errorf(codeLimit, "", "JSON has "+e.Msg+" at offset "+strconv.Itoa(e.Offset)+" ("+valuesWhy+")")
		}
		return nil, errorf(codeBadJSON, "", "invalid JSON at "+err.Error())
	}
	return v, nil
}

// Value is the JSON value o reads.
func (o Obj) Value() *jsonx.Value { return o.v }

// At is o's path.
func (o Obj) At() Path { return o.at }

// Idx is prefix[i]suffix, a field path with an index ("chunks[3].text").
func Idx(prefix string, i int, suffix string) string {
	return prefix + "[" + strconv.Itoa(i) + "]" + suffix
}

// Top is an Obj for the top-level object v (its kind already checked);
// code as for AsObject.
func Top(v *jsonx.Value, code string) Obj { return Obj{v: v, at: Root, code: code} }
