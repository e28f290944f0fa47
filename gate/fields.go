package gate

import (
	"strconv"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// This file holds the path-aware readers every decoder uses (request,
// answer, policy). They turn a parsed jsonx.Value into Go fields with errors
// that name the exact input path, e.g. `chunks[3].scores.vector: must be a
// number`, so a user can fix a request without reading the source.
//
// Rules shared by every decoder:
//   - unknown keys are errors (obj.strict), so a typo like "chunk" is never
//     silently ignored;
//   - an optional field given as JSON null counts as absent (clients in
//     Python and JavaScript often serialize missing optionals as null);
//     a required field given as null is "is required".

// path is a field path built lazily: only an error turns it into a string,
// so decoding a valid request builds no path strings for its fields. The
// path is pre[idx].post, e.g. pre "chunks", idx 3, post "scores".
type path struct {
	pre  string
	idx  int // -1 when there is no index
	post string
}

// root is the path of the top-level document.
var root = path{idx: -1}

// key is the path of member k of the object at p.
func (p path) key(k string) path {
	if p.idx < 0 {
		if p.pre == "" {
			return path{pre: k, idx: -1}
		}
		return path{pre: p.pre + "." + k, idx: -1}
	}
	if p.post == "" {
		return path{pre: p.pre, idx: p.idx, post: k}
	}
	return path{pre: p.pre, idx: p.idx, post: p.post + "." + k}
}

// index is the path of element i of the array at p.
func (p path) index(i int) path {
	if p.idx < 0 {
		return path{pre: p.pre, idx: i}
	}
	return path{pre: p.String(), idx: i}
}

func (p path) String() string {
	if p.idx < 0 {
		return p.pre
	}
	s := p.pre + "[" + strconv.Itoa(p.idx) + "]"
	if p.post != "" {
		s += "." + p.post
	}
	return s
}

// obj reads one JSON object. code is the error code for a wrong type or an
// unknown key: bad_field for requests, bad_policy for policies, bad_answer
// for answer validation.
type obj struct {
	v    *jsonx.Value
	at   path
	code string
}

// asObject checks that v is an object.
func asObject(v *jsonx.Value, at path, code string) (obj, *Error) {
	if v.Kind() != jsonx.Object {
		return obj{}, typeError(code, at, jsonx.Object)
	}
	return obj{v: v, at: at, code: code}, nil
}

func typeError(code string, at path, want jsonx.Kind) *Error {
	return errorf(code, at.String(), "must be "+want.String())
}

// fail returns an error about member key.
func (o obj) fail(key, msg string) *Error { return errorf(o.code, o.at.key(key).String(), msg) }

// strict rejects any key not listed in allowed, a space-separated list of
// names ("id doc_id title"). The first unknown key in document order is
// named, with the message "unknown field".
func (o obj) strict(allowed string) *Error {
	for i, n := 0, o.v.Len(); i < n; i++ {
		k := o.v.Key(i)
		if !listed(allowed, k) {
			return o.fail(k, "unknown field")
		}
	}
	return nil
}

// listed reports whether k is one of the space-separated words in list.
func listed(list, k string) bool {
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

// get returns member key, treating null as absent. A missing required member
// is an error.
func (o obj) get(key string, required bool) (*jsonx.Value, *Error) {
	v := o.v.Get(key)
	if v.IsNull() {
		if required {
			return nil, o.fail(key, "is required")
		}
		return nil, nil
	}
	return v, nil
}

// typed returns member key when it has kind k; ok is false when it is absent.
func (o obj) typed(key string, k jsonx.Kind, required bool) (v *jsonx.Value, ok bool, err *Error) {
	v, err = o.get(key, required)
	if err != nil || v == nil {
		return nil, false, err
	}
	if v.Kind() != k {
		return nil, false, typeError(o.code, o.at.key(key), k)
	}
	return v, true, nil
}

// str reads a string member.
func (o obj) str(key string, required bool) (string, bool, *Error) {
	v, ok, err := o.typed(key, jsonx.String, required)
	return v.Str(), ok, err
}

// num reads a number member. JSON numbers are always finite here: the parser
// rejects overflow and JSON has no NaN or Infinity.
func (o obj) num(key string, required bool) (float64, bool, *Error) {
	v, ok, err := o.typed(key, jsonx.Number, required)
	return v.Float(), ok, err
}

// boolean reads a true/false member.
func (o obj) boolean(key string, required bool) (bool, bool, *Error) {
	v, ok, err := o.typed(key, jsonx.Bool, required)
	return v.Bool(), ok, err
}

// arr reads an array member; iterate it with Len/Index and o.at.key(key).index(i).
func (o obj) arr(key string, required bool) (*jsonx.Value, bool, *Error) {
	return o.typed(key, jsonx.Array, required)
}

// object reads an object member as a reader with the member's path.
func (o obj) object(key string, required bool) (obj, bool, *Error) {
	v, ok, err := o.typed(key, jsonx.Object, required)
	if !ok {
		return obj{}, false, err
	}
	return obj{v: v, at: o.at.key(key), code: o.code}, true, nil
}

// numbers reads an array of numbers (an embedding, a list of weights). The
// caller checks the length limits.
func numbers(a *jsonx.Value, at path, code string, dst []float64) ([]float64, *Error) {
	for i, n := 0, a.Len(); i < n; i++ {
		e := a.Index(i)
		if e.Kind() != jsonx.Number {
			return nil, typeError(code, at.index(i), jsonx.Number)
		}
		dst = append(dst, e.Float())
	}
	return dst, nil
}

// strs reads an array of strings.
func strs(a *jsonx.Value, at path, code string) ([]string, *Error) {
	out := make([]string, 0, a.Len())
	for i, n := 0, a.Len(); i < n; i++ {
		e := a.Index(i)
		if e.Kind() != jsonx.String {
			return nil, typeError(code, at.index(i), jsonx.String)
		}
		out = append(out, e.Str())
	}
	return out, nil
}

// parseJSON parses a document and maps parser errors to gate errors: a
// syntax error is bad_json with the byte offset, too deep is a limit.
func parseJSON(data []byte, maxDepth int) (jsonx.Value, *Error) {
	return gateParse(data, jsonx.Limits{MaxDepth: maxDepth}, "", false)
}

// gateParse is parseJSON with every parser limit; inPlace parses without
// copying and consumes data (jsonx.ParseInPlace). Too many values is a limit
// error too; valuesWhy names where lim.MaxValues comes from.
func gateParse(data []byte, lim jsonx.Limits, valuesWhy string, inPlace bool) (jsonx.Value, *Error) {
	var ps jsonx.Parser
	v, err := parseWith(&ps, data, lim, valuesWhy, inPlace)
	if err != nil {
		return jsonx.Value{}, err
	}
	return *v, nil
}

// parseWith is gateParse into a reused parser: the result is valid until
// ps parses again.
func parseWith(ps *jsonx.Parser, data []byte, lim jsonx.Limits, valuesWhy string, inPlace bool) (*jsonx.Value, *Error) {
	var v *jsonx.Value
	var err error
	if inPlace {
		v, err = ps.ParseInPlace(data, lim)
	} else {
		v, err = ps.Parse(data, lim)
	}
	if err != nil {
		if e, ok := err.(*jsonx.Error); ok && e.TooDeep {
			return nil, errorf(CodeLimit, "", "JSON "+e.Msg+" at offset "+strconv.Itoa(e.Offset)+" (max_depth)")
		}
		if e, ok := err.(*jsonx.Error); ok && e.TooMany {
			return nil, errorf(CodeLimit, "", "JSON has "+e.Msg+" at offset "+strconv.Itoa(e.Offset)+" ("+valuesWhy+")")
		}
		return nil, errorf(CodeBadJSON, "", "invalid JSON at "+err.Error())
	}
	return v, nil
}
