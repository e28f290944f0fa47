package server

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
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
	erased      []byte // the "erased" member's value: ["query","text"]
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
	list, _ := json.Marshal(erased)
	return &gapMask{query: query, text: text, erased: list, ids: ids}, nil
}

// apply returns the masked event, or nil for an event that does not parse
// (the core and the server write them, so it does not happen): it is not
// written at all rather than written unmasked.
func (m *gapMask) apply(ev []byte) []byte {
	v, err := jsonx.Parse(ev, maskParseDepth)
	if err != nil || v.Kind() != jsonx.Object {
		return nil
	}
	dst := appendKept(make([]byte, 0, len(ev)+64), &v, m.keepEventMember, m.appendEventMember)
	dst = dst[:len(dst)-1] // reopen the object
	if len(dst) > 1 {
		dst = append(dst, ',')
	}
	dst = append(dst, `"erased":`...)
	dst = append(dst, m.erased...)
	return append(dst, '}')
}

// keepEventMember: the members known to carry no text, the query (as a
// token when masked) and the top chunks (their ids as tokens when masked);
// the embedding and a comment only when the query is not masked.
func (m *gapMask) keepEventMember(k string) bool {
	switch k {
	case "kind", "confidence", "signals", "query", "top_chunks":
		return true
	case "query_embedding", "comment":
		return !m.query
	}
	return false
}

func (m *gapMask) appendEventMember(dst []byte, k string, v *jsonx.Value) []byte {
	switch {
	case k == "query" && m.query:
		return m.appendToken(dst, v.Str())
	case k == "top_chunks" && v.Kind() == jsonx.Array:
		return m.appendChunks(dst, v)
	}
	return jsonx.AppendValue(dst, v)
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
		dst = appendKept(dst, c, func(k string) bool { return k == "id" || k == "doc_id" || k == "score" },
			func(dst []byte, k string, v *jsonx.Value) []byte {
				if k != "score" && m.text {
					return m.appendToken(dst, v.Str())
				}
				return jsonx.AppendValue(dst, v)
			})
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
