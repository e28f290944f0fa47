package chat

import (
	"unicode/utf8"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// Bodies are rewritten by splicing: Parse finds the byte spans of the few
// members the mapping touches (messages, documents, ctxgate) and every other
// byte is copied as the client sent it. jsonx validates the body first (strictly:
// duplicate keys, UTF-8, depth), so the spans come from jsonx's walker over
// valid JSON (jsonx.WalkObject), which only finds where values start and
// end; re-serializing a jsonx tree instead would re-escape every string of
// the conversation.

// span is a half-open byte range [Start, End) of one JSON value in a body.
type span jsonx.Span

func (s span) ok() bool { return s.End > s.Start }

func skipSpace(b []byte, i int) int { return jsonx.SkipSpace(b, i) }

// eachMember walks the object starting at b[i] == '{' and calls fn with each
// member's raw key (between the quotes, escapes not decoded) and its member
// and value spans. It returns the end of the object, -1 when b holds none
// at i. fn may be nil to only skip the object.
func eachMember(b []byte, i int, fn func(key []byte, member, value span)) int {
	if fn == nil {
		return jsonx.WalkObject(b, i, nil)
	}
	return jsonx.WalkObject(b, i, func(k []byte, m, v jsonx.Span) { fn(k, span(m), span(v)) })
}

// EachMember calls fn with each member of the JSON object b: its raw name
// (between the quotes, escapes not decoded) and its raw value. It is the
// walk Parse uses, for hosts that read a few top-level members of a body
// already known to be valid JSON (a request the gate accepted, a decision the
// gate wrote) without parsing the rest. It reports false when b is not an
// object it can walk; then what fn saw should not be trusted.
func EachMember(b []byte, fn func(name, value []byte)) bool {
	return jsonx.WalkObject(b, skipSpace(b, 0), func(k []byte, _, v jsonx.Span) { fn(k, b[v.Start:v.End]) }) >= 0
}

// eachElement walks the array starting at b[i] == '[' and calls fn with each
// element's span; it returns the end of the array, -1 when b holds none at
// i. fn may be nil.
func eachElement(b []byte, i int, fn func(value span)) int {
	if fn == nil {
		return jsonx.WalkArray(b, i, nil)
	}
	return jsonx.WalkArray(b, i, func(v jsonx.Span) { fn(span(v)) })
}

// member returns the span of obj's member named key, if obj is an object
// that has one. The last occurrence wins, as in most JSON decoders.
func member(b []byte, obj span, key string) (value span, whole span, found bool) {
	if !obj.ok() || b[obj.Start] != '{' {
		return span{}, span{}, false
	}
	eachMember(b, obj.Start, func(k []byte, m, v span) {
		if keyIs(k, key) {
			value, whole, found = v, m, true
		}
	})
	return value, whole, found
}

// path follows a sequence of member names from obj.
func path(b []byte, obj span, keys []string) (span, bool) {
	cur := obj
	for _, k := range keys {
		v, _, ok := member(b, cur, k)
		if !ok {
			return span{}, false
		}
		cur = v
	}
	return cur, true
}

// keyIs compares a raw member name (escapes not decoded) with key. A name
// with escapes ("docum\u0065nts") is decoded as it is compared, so the
// scanner and jsonx always agree on which member is which, and nothing is
// allocated: a body of many escaped names used to cost a parse of each, for
// each member the mapping looks for. raw is part of a body jsonx accepted,
// so its escapes are well formed.
func keyIs(raw []byte, key string) bool {
	k := 0
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			if k >= len(key) || key[k] != c {
				return false
			}
			i, k = i+1, k+1
			continue
		}
		if i+1 >= len(raw) {
			return false
		}
		var r rune
		switch e := raw[i+1]; e {
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			var ok bool
			if r, ok = jsonx.Hex4(raw, i+2); !ok {
				return false
			}
			if r >= 0xD800 && r <= 0xDBFF {
				lo, ok := jsonx.Hex4(raw, i+8)
				if !ok || raw[i+6] != '\\' || raw[i+7] != 'u' {
					return false
				}
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				i += 6
			}
			i += 4
		default:
			r = rune(e) // '"', '\\', '/'
		}
		i += 2
		var buf [utf8.UTFMax]byte
		n := utf8.EncodeRune(buf[:], r)
		if len(key)-k < n {
			return false
		}
		for j := 0; j < n; j++ {
			if key[k+j] != buf[j] {
				return false
			}
		}
		k += n
	}
	return k == len(key)
}

// strIs reports whether the value v of b is the JSON string s, escapes
// decoded ("us\u0065r" is "user"), like keyIs for member names.
func strIs(b []byte, v span, s string) bool {
	if !v.ok() || v.End-v.Start < 2 || b[v.Start] != '"' {
		return false
	}
	return keyIs(b[v.Start+1:v.End-1], s)
}
