package encode

import "github.com/ctxgate/ctxgate/gate/jsonx"

// AppendGapEvent appends a gap event's JSON object, or null for nil: the
// decision's and the validation's gap_event, and the one encoder every
// writer of gap events uses (the server's thumbs-down and soft-refusal
// events too), so an event has the same bytes whoever logs it. Fields in
// the GapEvent type's order; query_embedding is omitted when the request
// had none (an empty vector is not an embedding); numbers as in a decision
// (jsonx.AppendFloat).
func AppendGapEvent(dst []byte, g *GapEvent) []byte {
	if g == nil {
		return append(dst, "null"...)
	}
	dst = jsonx.AppendKeyString(dst, `{"kind":`, g.Kind)
	dst = jsonx.AppendKeyString(dst, `,"query":`, g.Query)
	if len(g.QueryEmbedding) > 0 {
		for i, x := range g.QueryEmbedding {
			if i == 0 {
				dst = jsonx.AppendKeyFloat(dst, `,"query_embedding":[`, x)
			} else {
				dst = jsonx.AppendKeyFloat(dst, ",", x)
			}
		}
		dst = append(dst, ']')
	}
	dst = jsonx.AppendKeyFloat(dst, `,"confidence":`, g.Confidence)
	dst = appendSignals(dst, `,"signals":`, g.Signals)
	dst = append(dst, `,"top_chunks":[`...)
	for i := range g.TopChunks {
		c := &g.TopChunks[i]
		if i == 0 {
			dst = jsonx.AppendKeyString(dst, `{"id":`, c.ID)
		} else {
			dst = jsonx.AppendKeyString(dst, `,{"id":`, c.ID)
		}
		dst = jsonx.AppendKeyString(dst, `,"doc_id":`, c.DocID)
		dst = jsonx.AppendKeyFloat(dst, `,"score":`, c.Score)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}
