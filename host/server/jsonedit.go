package server

import (
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// The gateway edits a few values of an upstream's JSON (an answer's text for
// the caveat, the sufficiency member of a stream's last event): it walks the
// parsed value and writes it back compactly, letting an editor replace the
// values it wants. Numbers keep their spelling; strings are re-escaped.
// Answers that need no edit are relayed with their own bytes instead.

// jsonEditor may write a replacement for the value at path (member names,
// array indexes in decimal) and report true; false keeps the value, whose
// children it then sees in turn.
type jsonEditor func(dst []byte, path []string, v *jsonx.Value) ([]byte, bool)

// appendEdited appends v, with ed's replacements.
func appendEdited(dst []byte, v *jsonx.Value, path []string, ed jsonEditor) []byte {
	if out, ok := ed(dst, path, v); ok {
		return out
	}
	switch v.Kind() {
	case jsonx.Object:
		return appendObject(dst, v, path, ed, "", nil)
	case jsonx.Array:
		dst = append(dst, '[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendEdited(dst, v.Index(i), append(path, strconv.Itoa(i)), ed)
		}
		return append(dst, ']')
	}
	return jsonx.AppendValue(dst, v)
}

// appendObject appends the object v through ed, without its members named
// drop in any case (when set: a Go client matches names so), and with extra
// (`"name":value`, when set) as its last member.
func appendObject(dst []byte, v *jsonx.Value, path []string, ed jsonEditor, drop string, extra []byte) []byte {
	dst = append(dst, '{')
	n := 0
	for i := 0; i < v.Len(); i++ {
		k := v.Key(i)
		if drop != "" && strings.EqualFold(k, drop) {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = jsonx.AppendString(dst, k)
		dst = append(dst, ':')
		dst = appendEdited(dst, v.Member(i), append(path, k), ed)
	}
	if len(extra) > 0 {
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, extra...)
	}
	return append(dst, '}')
}

// noEdit keeps every value.
func noEdit(dst []byte, _ []string, _ *jsonx.Value) ([]byte, bool) { return dst, false }

// pathIs reports whether path is want, where "*" in want matches any one
// element.
func pathIs(path []string, want ...string) bool {
	if len(path) != len(want) {
		return false
	}
	for i, w := range want {
		if w != "*" && w != path[i] {
			return false
		}
	}
	return true
}

// intOf reads a JSON number as an int (-1 when v is not a whole number).
func intOf(v *jsonx.Value) int {
	if v.Kind() != jsonx.Number {
		return -1
	}
	n, err := strconv.Atoi(v.Raw())
	if err != nil {
		return -1
	}
	return n
}

// nonEmptyString reports whether v is a string with text in it.
func nonEmptyString(v *jsonx.Value) bool {
	return v.Kind() == jsonx.String && v.Str() != ""
}
