package gate

import "github.com/ctxgate/ctxgate/gate/jsonx"

// AppendDecision appends the decision JSON to dst: compact, no trailing
// newline, fields in the order of the Decision type's comments, numbers
// rounded to 6 decimal places (jsonx.AppendFloat). Lists are written as []
// when empty and optional objects as null, so every decision has the same
// keys and a host can read it without presence checks. The bytes depend only
// on d, never on the build or the host.
func AppendDecision(dst []byte, d *Decision) []byte {
	return appendDecision(dst, d, nil)
}

// appendDecision is AppendDecision; when d's prompt is the one later stands
// for, its sources come from later's chunks (encode_sources.go).
func appendDecision(dst []byte, d *Decision, later *sourcesLater) []byte {
	// Grow once to about the final size: the prompt dominates a large
	// decision, and growing by doubling from nil copied it several times.
	if need := decisionSizeHint(d) + later.sizeHint(d.Prompt); cap(dst)-len(dst) < need {
		dst = append(make([]byte, 0, len(dst)+need), dst...)
	}
	dst = append(dst, `{"action":`...)
	dst = jsonx.AppendString(dst, string(d.Action))
	dst = append(dst, `,"level":`...)
	dst = jsonx.AppendString(dst, string(d.Level))
	dst = append(dst, `,"confidence":`...)
	dst = jsonx.AppendFloat(dst, d.Confidence)
	dst = append(dst, `,"band":`...)
	dst = jsonx.AppendString(dst, d.Band)
	dst = append(dst, `,"interpretation":`...)
	dst = jsonx.AppendString(dst, d.Interpretation)
	dst = append(dst, `,"flag_for_review":`...)
	dst = appendBool(dst, d.FlagForReview)
	dst = append(dst, `,"query_type":`...)
	dst = jsonx.AppendString(dst, d.QueryType)
	dst = append(dst, `,"signals":`...)
	dst = appendSignals(dst, d.Signals)
	dst = append(dst, `,"chunks":[`...)
	for i := range d.Chunks {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendChunkOutcome(dst, &d.Chunks[i])
	}
	dst = append(dst, `],"prompt":`...)
	if p := d.Prompt; p != nil {
		dst = append(dst, `{"instructions":`...)
		dst = jsonx.AppendString(dst, p.Instructions)
		dst = append(dst, `,"sources":`...)
		if later.stands(p) {
			dst = appendSourcesJSON(dst, later.chunks, later.warning)
		} else {
			dst = jsonx.AppendString(dst, p.Sources)
		}
		dst = append(dst, `,"minimal":`...)
		dst = jsonx.AppendString(dst, p.Minimal)
		dst = append(dst, '}')
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"caveat":`...)
	dst = jsonx.AppendString(dst, d.Caveat)
	dst = append(dst, `,"refusal":`...)
	if r := d.Refusal; r != nil {
		dst = append(dst, `{"type":`...)
		dst = jsonx.AppendString(dst, r.Type)
		dst = append(dst, `,"message":`...)
		dst = jsonx.AppendString(dst, r.Message)
		dst = append(dst, '}')
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"missing_aspects":`...)
	dst = appendStrings(dst, d.MissingAspects)
	dst = append(dst, `,"confidence_factors":`...)
	dst = appendStrings(dst, d.ConfidenceFactors)
	dst = append(dst, `,"recommendations":`...)
	dst = appendStrings(dst, d.Recommendations)
	dst = append(dst, `,"gap_event":`...)
	dst = AppendGapEvent(dst, d.GapEvent)
	dst = append(dst, `,"policy":{"name":`...)
	dst = jsonx.AppendString(dst, d.Policy.Name)
	dst = append(dst, `,"version":`...)
	dst = jsonx.AppendString(dst, d.Policy.Version)
	dst = append(dst, `,"sha256":`...)
	dst = jsonx.AppendString(dst, d.Policy.SHA256)
	return append(dst, "}}"...)
}

// appendChunkOutcome writes id, doc_id, tag, kept, reason, score, then the
// optional per-seed scores only when set, so a policy that does not compute
// quality does not report a misleading quality of 0.
func appendChunkOutcome(dst []byte, c *ChunkOutcome) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsonx.AppendString(dst, c.ID)
	dst = append(dst, `,"doc_id":`...)
	dst = jsonx.AppendString(dst, c.DocID)
	dst = append(dst, `,"tag":`...)
	dst = jsonx.AppendString(dst, c.Tag)
	dst = append(dst, `,"kept":`...)
	dst = appendBool(dst, c.Kept)
	dst = append(dst, `,"reason":`...)
	dst = jsonx.AppendString(dst, c.Reason)
	dst = append(dst, `,"score":`...)
	dst = jsonx.AppendFloat(dst, c.Score)
	if c.HasQuality {
		dst = append(dst, `,"quality":`...)
		dst = jsonx.AppendFloat(dst, c.Quality)
	}
	if c.HasVector {
		dst = append(dst, `,"vector":`...)
		dst = jsonx.AppendFloat(dst, c.Vector)
	}
	if c.HasBM25 {
		dst = append(dst, `,"bm25":`...)
		dst = jsonx.AppendFloat(dst, c.BM25)
	}
	if c.HasFused {
		dst = append(dst, `,"fused":`...)
		dst = jsonx.AppendFloat(dst, c.Fused)
	}
	return append(dst, '}')
}

// appendSignals writes signals as one object {name: value} in slice order
// (the engine's fixed computation order), never in map order.
func appendSignals(dst []byte, ss []Signal) []byte {
	dst = append(dst, '{')
	for i := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendString(dst, ss[i].Name)
		dst = append(dst, ':')
		dst = jsonx.AppendFloat(dst, ss[i].Value)
	}
	return append(dst, '}')
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendString(dst, s)
	}
	return append(dst, ']')
}

func appendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// decisionSizeHint is a little over a decision's usual JSON size: its text
// fields (escaping rarely adds much), about 200 bytes a chunk outcome and 40
// a signal, and room for the fixed keys. It only sizes the first allocation.
func decisionSizeHint(d *Decision) int {
	n := 1024 + len(d.Interpretation) + len(d.Caveat) + 200*len(d.Chunks) + 40*len(d.Signals)
	if p := d.Prompt; p != nil {
		n += len(p.Instructions) + len(p.Sources) + len(p.Minimal) + len(p.Sources)/32
	}
	if r := d.Refusal; r != nil {
		n += len(r.Message)
	}
	for _, l := range [...][]string{d.MissingAspects, d.ConfidenceFactors, d.Recommendations} {
		for _, x := range l {
			n += len(x) + 4
		}
	}
	if g := d.GapEvent; g != nil {
		n += 256 + len(g.Query) + 24*len(g.QueryEmbedding) + 40*len(g.Signals) + 80*len(g.TopChunks)
	}
	return n
}
