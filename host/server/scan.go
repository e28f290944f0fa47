package server

import (
	"github.com/ctxgate/ctxgate/gate/chat"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// requestQuery reads the question and the query embedding of a gate request
// the gate has just accepted (so it is valid JSON) without parsing the whole
// document: it walks the top-level members and skips values by bracket
// counting, which costs a fraction of a full parse of the chunk texts. Keys
// with escapes, which the walk does not decode, fall back to the parser.
func requestQuery(body []byte) (string, []byte) {
	var query, emb []byte
	ok := eachTopMember(body, func(key, val []byte) {
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
	if len(query) < 2 || query[0] != '"' {
		return "", emb
	}
	v, err := jsonx.Parse(query, 1)
	if err != nil {
		return "", emb
	}
	return v.Str(), emb
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

// eachTopMember calls fn with each top-level member's raw key (without
// quotes) and raw value. It returns false when the input is not an object
// it can walk (then nothing should be trusted).
func eachTopMember(b []byte, fn func(key, val []byte)) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) {
		if b[i] != '"' {
			return false
		}
		end := skipString(b, i)
		if end < 0 {
			return false
		}
		key := b[i+1 : end-1]
		for _, c := range key {
			if c == '\\' {
				return false
			}
		}
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		vend := skipValue(b, i)
		if vend < 0 {
			return false
		}
		fn(key, b[i:vend])
		i = skipWS(b, vend)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return true
		}
		if b[i] != ',' {
			return false
		}
		i = skipWS(b, i+1)
	}
	return false
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				k := skipString(b, j)
				if k < 0 {
					return -1
				}
				j = k - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\r' && b[j] != '\t' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
