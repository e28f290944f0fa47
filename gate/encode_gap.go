package gate

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
	dst = append(dst, `{"kind":`...)
	dst = jsonx.AppendString(dst, g.Kind)
	dst = append(dst, `,"query":`...)
	dst = jsonx.AppendString(dst, g.Query)
	if len(g.QueryEmbedding) > 0 {
		dst = append(dst, `,"query_embedding":[`...)
		for i, x := range g.QueryEmbedding {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonx.AppendFloat(dst, x)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"confidence":`...)
	dst = jsonx.AppendFloat(dst, g.Confidence)
	dst = append(dst, `,"signals":`...)
	dst = appendSignals(dst, g.Signals)
	dst = append(dst, `,"top_chunks":[`...)
	for i := range g.TopChunks {
		c := &g.TopChunks[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = jsonx.AppendString(dst, c.ID)
		dst = append(dst, `,"doc_id":`...)
		dst = jsonx.AppendString(dst, c.DocID)
		dst = append(dst, `,"score":`...)
		dst = jsonx.AppendFloat(dst, c.Score)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}
