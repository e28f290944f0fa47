package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/ctxgate/ctxgate/gate/chat"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// An upstream's answer is read as its clients read it. The gate's parser
// is strict (jsonx: no repeated member names, valid UTF-8, no lone
// surrogates), while every client (JavaScript's JSON.parse, Python's json,
// Go's encoding/json) takes the last of repeated members, replaces invalid
// text, and reads the answer all the same. Refusing such an answer and
// relaying its bytes would let an upstream put text the caveat never
// reached, or a sufficiency object of its own, in front of the client; so
// what the strict parser refuses is rewritten as the clients read it and
// parsed again. What even that cannot read (NaN, which Python reads;
// nesting past chat.MaxDepth) is not relayed when the gate has anything to
// add to it.

// parseAsClients parses an upstream's JSON as its clients read it. b is
// returned when the strict parser reads it; otherwise the rewriting that
// was parsed (last member wins, invalid text replaced).
func parseAsClients(b []byte) (jsonx.Value, []byte, error) {
	root, err := jsonx.Parse(b, chat.MaxDepth)
	if err == nil {
		return root, b, nil
	}
	n, lerr := lastMemberWins(b)
	if lerr != nil {
		return jsonx.Value{}, nil, err
	}
	root, err = jsonx.Parse(n, chat.MaxDepth)
	if err != nil {
		return jsonx.Value{}, nil, err
	}
	return root, n, nil
}

// lastMemberWins rewrites one JSON value compactly as encoding/json reads
// it: of repeated member names (after unescaping) the first position and
// the last value, strings re-encoded (invalid UTF-8 and lone surrogates as
// U+FFFD), numbers as written.
func lastMemberWins(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	out, err := appendLastWins(make([]byte, 0, len(b)), dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return out, nil
}

func appendLastWins(dst []byte, dec *json.Decoder) ([]byte, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			dst = append(dst, '[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					dst = append(dst, ',')
				}
				if dst, err = appendLastWins(dst, dec); err != nil {
					return nil, err
				}
			}
			dec.Token() // ]
			return append(dst, ']'), nil
		}
		var names []string
		values := map[string][]byte{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			name, _ := k.(string)
			val, err := appendLastWins(nil, dec)
			if err != nil {
				return nil, err
			}
			if _, seen := values[name]; !seen {
				names = append(names, name)
			}
			values[name] = val
		}
		dec.Token() // }
		dst = append(dst, '{')
		for i, name := range names {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonx.AppendString(dst, name)
			dst = append(dst, ':')
			dst = append(dst, values[name]...)
		}
		return append(dst, '}'), nil
	case string:
		return jsonx.AppendString(dst, v), nil
	case json.Number:
		return append(dst, v...), nil
	case bool:
		if v {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	}
	return append(dst, "null"...), nil
}

// isSufficiency reports whether a member name is the gate's "sufficiency"
// to some client: Go's encoding/json matches names without regard to case.
func isSufficiency(name string) bool {
	return strings.EqualFold(name, "sufficiency")
}

// hasSufficiency reports whether an upstream's object carries a
// sufficiency member of its own: at the top, or in the Responses API's
// "response" object (a stream's events carry the response there).
func hasSufficiency(root *jsonx.Value) bool {
	for _, v := range []*jsonx.Value{root, root.Get("response")} {
		for i := 0; i < v.Len() && v.Kind() == jsonx.Object; i++ {
			if isSufficiency(v.Key(i)) {
				return true
			}
		}
	}
	return false
}

// withoutSufficiency wraps ed so that the object it writes loses the
// upstream's sufficiency members at the top and in "response" (where ed
// writes no replacement of its own).
func withoutSufficiency(ed jsonEditor) jsonEditor {
	var strip jsonEditor
	strip = func(dst []byte, path []string, v *jsonx.Value) ([]byte, bool) {
		if ed != nil {
			if out, ok := ed(dst, path, v); ok {
				return out, true
			}
		}
		if v.Kind() == jsonx.Object && (len(path) == 0 || pathIs(path, "response")) {
			return appendObject(dst, v, path, strip, "sufficiency", nil), true
		}
		return dst, false
	}
	return strip
}
