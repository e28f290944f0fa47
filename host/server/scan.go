package server

import (
	"github.com/ctxgate/ctxgate/gate/chat"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// requestQuery reads the question and the query embedding of a gate request
// the gate has just accepted (so it is valid JSON) without parsing the whole
// document: it walks the top-level members and skips the others (walk.go),
// which costs a fraction of a full parse of the chunk texts. Keys with
// escapes, which the walk does not decode, fall back to the parser.
func requestQuery(body []byte) (string, []byte) {
	var query, emb []byte
	ok := walkMembers(body, func(key, val []byte) {
		switch string(key) {
		case "query":
			query = val
		case "query_embedding":
			if len(val) > 2 && val[0] == '[' {
				// Compact: it is copied into gap events, one JSON line each.
				if emb = chat.AppendCompact(nil, val); len(emb) == 2 {
					emb = nil // "[ ]", as the parser reads it: no embedding
				}
			}
		}
	})
	if !ok {
		return requestQuerySlow(body)
	}
	q, err := stringValue(query)
	if err != nil {
		return "", emb
	}
	return q, emb
}

func requestQuerySlow(body []byte) (string, []byte) {
	v, err := jsonx.Parse(body, 64)
	if err != nil {
		return "", nil
	}
	var emb []byte
	if e := v.Get("query_embedding"); e.Kind() == jsonx.Array && e.Len() > 0 {
		emb = jsonx.AppendValue(nil, e)
	}
	return v.Get("query").Str(), emb
}
