package server

import (
	"crypto/sha256"
	"encoding/base64"
	"hash"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// gapMask makes the gap log follow decision_log_mask: what the decision
// log erases, gap events do not carry in plaintext either.
//
//   - query: the event's query becomes a token (below), its
//     query_embedding and a feedback comment (user text too) are dropped;
//   - text: each top chunk's id and doc_id become tokens (chunk and
//     document ids are often titles, paths or URLs).
//
// A token is "masked:" and 12 characters of HMAC-SHA256 under the
// server's decision id key (domain 'm'), so the same question (or
// document) gives the same token and a report still counts repeats and
// groups them, while the text cannot be recovered, nor a short question
// guessed, without the key. A masked event keeps only the members known
// to carry no text (kind, confidence, signals, the chunks' scores) and
// says what was erased in "erased", as a decision-log line does.
type gapMask struct {
	query, text bool
	erased      []string
	ids         *idIssuer
}

// maskDomain separates mask tokens from decision ids under the same key:
// an id's MAC input is idDomain || 16-byte nonce.
const maskDomain = 'm'

// newGapMask is the gap log's mask for decision_log_mask groups; nil when
// nothing is masked.
func newGapMask(groups []string, ids *idIssuer) (*gapMask, error) {
	query, text, erased, err := parseMask(groups)
	if err != nil || !query && !text {
		return nil, err
	}
	return &gapMask{query: query, text: text, erased: erased, ids: ids}, nil
}

// gapEventMembers are the members a masked event keeps as they are.
var gapEventMembers = map[string]bool{"kind": true, "confidence": true, "signals": true}

// apply returns the masked event, or nil for an event that does not parse
// (the core and the server write them, so it does not happen): it is not
// written at all rather than written unmasked.
func (m *gapMask) apply(ev []byte) []byte {
	v, err := jsonx.Parse(ev, maskParseDepth)
	if err != nil || v.Kind() != jsonx.Object {
		return nil
	}
	dst := make([]byte, 0, len(ev))
	dst = append(dst, '{')
	n := 0
	member := func(k string) {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = jsonx.AppendString(dst, k)
		dst = append(dst, ':')
	}
	for i := 0; i < v.Len(); i++ {
		k, val := v.Key(i), v.Member(i)
		switch {
		case gapEventMembers[k]:
			member(k)
			dst = jsonx.AppendValue(dst, val)
		case k == "query":
			member(k)
			if m.query {
				dst = m.appendToken(dst, val.Str())
			} else {
				dst = jsonx.AppendValue(dst, val)
			}
		case (k == "query_embedding" || k == "comment") && !m.query:
			member(k)
			dst = jsonx.AppendValue(dst, val)
		case k == "top_chunks" && val.Kind() == jsonx.Array:
			member(k)
			dst = m.appendChunks(dst, val)
		}
	}
	member("erased")
	dst = append(dst, '[')
	for i, g := range m.erased {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendString(dst, g)
	}
	return append(dst, "]}"...)
}

// appendChunks writes the top chunks with only their ids (as tokens under
// text) and scores.
func (m *gapMask) appendChunks(dst []byte, list *jsonx.Value) []byte {
	dst = append(dst, '[')
	for i := 0; i < list.Len(); i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		c := list.Index(i)
		if c.Kind() != jsonx.Object {
			dst = append(dst, "null"...)
			continue
		}
		dst = append(dst, '{')
		n := 0
		for j := 0; j < c.Len(); j++ {
			k, val := c.Key(j), c.Member(j)
			if k != "id" && k != "doc_id" && k != "score" {
				continue
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = jsonx.AppendString(dst, k)
			dst = append(dst, ':')
			if k != "score" && m.text {
				dst = m.appendToken(dst, val.Str())
			} else {
				dst = jsonx.AppendValue(dst, val)
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendToken writes the token of s as a JSON string.
func (m *gapMask) appendToken(dst []byte, s string) []byte {
	h := m.ids.macs.Get().(hash.Hash)
	h.Reset()
	h.Write([]byte{maskDomain})
	h.Write([]byte(s))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	m.ids.macs.Put(h)
	dst = append(dst, `"masked:`...)
	dst = base64.RawURLEncoding.AppendEncode(dst, sum[:9])
	return append(dst, '"')
}
