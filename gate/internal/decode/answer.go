package decode

import (
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/gate/internal/jsonread"
	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/gate/wire"
)

// ParseAnswer parses the answer-validation input {"answer": "...", "tags":
// ["S1", ...], "query": "..."}. The rules:
//   - empty body, invalid JSON or a top level that is not an object: bad_json,
//     as for requests; a limit exceeded: limit;
//   - "answer" is a required string and may be empty (a model can return
//     nothing, and that is worth validating);
//   - "query" is optional (copied into a refusal_soft gap event), trimmed
//     like a request's query, at most max_query_bytes;
//   - "tags" is optional; each must look like S1, S2... (S, then a number
//     without leading zeros), at most max_chunks of them, no repeats;
//   - any other field, a wrong type or a bad tag is bad_answer naming it.
//
//
// It parses data in place when inPlace is set: data is then modified
// (escaped strings are unescaped where they are) and the Answer's strings
// view it, so it must not change while the Answer is in use.

func ParseAnswer(data []byte, lim *Limits, inPlace bool) (*wire.Answer, *Error) {
	l := lim.Resolved()
	if len(data) > l.MaxRequestBytes {
		return nil, limitError("", "answer is "+strconv.Itoa(len(data))+" bytes", l.MaxRequestBytes, "max_request_bytes")
	}
	if isBlank(data) {
		return nil, errorf(CodeBadJSON, "", "empty request")
	}
	// A valid answer input has at most max_chunks tags plus 6 other values,
	// so the parse stops there instead of building a huge tree.
	doc, err := jsonread.Parse(data, jsonx.Limits{MaxDepth: l.MaxDepth, MaxValues: l.MaxChunks + 8}, "max_chunks tags", inPlace)
	if err != nil {
		return nil, err
	}
	if doc.Kind() != jsonx.Object {
		return nil, errorf(CodeBadJSON, "", "answer input must be a JSON object, not "+doc.Kind().String())
	}
	o := jsonread.Top(&doc, CodeBadAnswer)
	if err := o.Strict("answer tags query"); err != nil {
		return nil, err
	}
	a := &wire.Answer{}
	if a.Answer, _, err = o.Str("answer", true); err != nil {
		return nil, err
	}
	q, _, err := o.Str("query", false)
	if err != nil {
		return nil, err
	}
	if len(q) > l.MaxQueryBytes {
		return nil, limitError("query", "is "+strconv.Itoa(len(q))+" bytes", l.MaxQueryBytes, "max_query_bytes")
	}
	a.Query = strings.TrimSpace(q)
	tags, ok, err := o.Arr("tags", false)
	if err != nil || !ok {
		return a, err
	}
	at := jsonread.Root.Key("tags")
	if tags.Len() > l.MaxChunks {
		return nil, limitError(at.String(), "has "+strconv.Itoa(tags.Len())+" tags", l.MaxChunks, "max_chunks")
	}
	if a.Tags, err = jsonread.Strs(tags, at, CodeBadAnswer); err != nil {
		return nil, err
	}
	// The first bad tag, unless a tag before it repeats an earlier one.
	// Repeats, not a pairwise loop: max_chunks tags would be 500,000
	// comparisons.
	bad := len(a.Tags)
	for i, t := range a.Tags {
		if !isSourceTag(t) {
			bad = i
			break
		}
	}
	var r jsonx.Repeats
	h := r.Hashes(bad)
	for i := range h {
		h[i] = jsonx.HashKey(a.Tags[i])
	}
	offered := tagList(a.Tags)
	if i, _ := r.First(&offered); i >= 0 {
		return nil, errorf(CodeBadAnswer, at.Index(i).String(), "duplicate tag \""+a.Tags[i]+"\"")
	}
	if bad < len(a.Tags) {
		return nil, errorf(CodeBadAnswer, at.Index(bad).String(), "must be a source tag like S1")
	}
	return a, nil
}

// tagList gives jsonx.Repeats the offered tags.
type tagList []string

func (t *tagList) Key(i int) string { return (*t)[i] }

// isSourceTag reports whether t matches S[1-9][0-9]* (at most 9 digits, so
// the number fits any int).
func isSourceTag(t string) bool {
	if len(t) < 2 || len(t) > 10 || t[0] != 'S' || t[1] < '1' || t[1] > '9' {
		return false
	}
	for i := 2; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}
