package encode

import "github.com/ctxgate/ctxgate/gate/jsonx"

// The output limit (limits.max_decision_bytes). Escaping makes a decision
// larger than the request it came from: a '<' in a chunk text or id is six
// bytes of JSON, a control character six, and the sources block and the
// chunk list both carry the chunks' strings. 32 chunk texts of 64 KiB of
// '<' were a 12.6 MB decision, and 1000 chunk ids of '<' (a 4 MiB request)
// 25 MB: the TinyGo module trapped, out of memory. So the size a decision
// or a validation would have is known before any of it is written (or, for
// Decide, before it is returned), and over the limit it is a limit error
// instead.
//
// The size functions walk the value the way its writer does and count what
// it would write: exactly (jsonx.StringLen, FloatLen), or, first, as a
// cheap upper bound (every string byte escaped to its longest form) that
// spares the exact walk whenever the bound is under the limit, as it is
// for every ordinary request. The gate's TestEvaluateMatchesDecide and
// FuzzDecisionSize hold the exact count to the writer's bytes.

// Sizer counts a JSON output's bytes, exactly or as an upper bound.
type Sizer struct{ Exact bool }

// Str is the size of s written as a JSON string after key.
func (z Sizer) Str(key, s string) int {
	if z.Exact {
		return len(key) + jsonx.StringLen(s)
	}
	return len(key) + 2 + 6*len(s) // six bytes (\u003c) is the most one byte takes
}

// Num is the size of x written as a JSON number after key.
func (z Sizer) Num(key string, x float64) int {
	if !z.Exact && x > -(1<<33) && x < 1<<33 {
		return len(key) + jsonx.MaxPutFloat
	}
	return len(key) + jsonx.FloatLen(x)
}

// strs is appendStrings' size.
func (z Sizer) strs(key string, ss []string) int {
	n := len(key) + 2
	for i, s := range ss {
		n += z.Str("", s)
		if i > 0 {
			n++
		}
	}
	return n
}

// signals is appendSignals' size.
func (z Sizer) signals(key string, ss []Signal) int {
	n := len(key) + 2
	for i := range ss {
		n += z.Str("", ss[i].Name) + z.Num(":", ss[i].Value)
		if i > 0 {
			n++
		}
	}
	return n
}

// Decision is AppendDecision's size for d (its sources block held's when
// held holds its prompt; held may be nil).
func (z Sizer) Decision(d *Decision, held Held) int {
	n := z.Str(`{"action":`, string(d.Action)) + z.Str(`,"level":`, string(d.Level)) +
		z.Num(`,"confidence":`, d.Confidence) + z.Str(`,"band":`, d.Band) +
		z.Str(`,"interpretation":`, d.Interpretation)
	if d.FlagForReview {
		n += z.Str(`,"flag_for_review":true,"query_type":`, d.QueryType)
	} else {
		n += z.Str(`,"flag_for_review":false,"query_type":`, d.QueryType)
	}
	n += z.signals(`,"signals":`, d.Signals)
	if r := d.RAGConfidence; r != nil {
		n += z.ragConfidence(r)
	}
	n += len(`,"chunks":[`)
	for i := range d.Chunks {
		n += z.outcome(i > 0, &d.Chunks[i])
	}
	if p := d.Prompt; p != nil {
		n += z.Str(`],"prompt":{"instructions":`, p.Instructions)
		if held != nil && held.Holds(p) {
			n += len(`,"sources":`) + held.SourcesSize(z)
		} else {
			n += z.Str(`,"sources":`, p.Sources)
		}
		n += z.Str(`,"minimal":`, p.Minimal) + z.Str(`},"caveat":`, d.Caveat)
	} else {
		n += z.Str(`],"prompt":null,"caveat":`, d.Caveat)
	}
	if r := d.Refusal; r != nil {
		n += z.Str(`,"refusal":{"type":`, r.Type) + z.Str(`,"message":`, r.Message) +
			z.strs(`},"missing_aspects":`, d.MissingAspects)
	} else {
		n += z.strs(`,"refusal":null,"missing_aspects":`, d.MissingAspects)
	}
	n += z.strs(`,"confidence_factors":`, d.ConfidenceFactors) + z.strs(`,"recommendations":`, d.Recommendations)
	if len(d.Warnings) > 0 {
		n += z.warnings(d.Warnings)
	}
	n += len(`,"gap_event":`) + z.GapEvent(d.GapEvent)
	return n + z.Str(`,"policy":{"name":`, d.Policy.Name) + z.Str(`,"version":`, d.Policy.Version) +
		z.Str(`,"sha256":`, d.Policy.SHA256) + len("}}")
}

// warnings is appendWarnings' size.
func (z Sizer) warnings(ws []Warning) int {
	n := len(`,"warnings":[]`)
	for i := range ws {
		n += z.Str(`{"code":`, ws[i].Code) + z.Str(`,"message":`, ws[i].Message) + 1
		if i > 0 {
			n++
		}
	}
	return n
}

// ragConfidence is appendRAGConfidence's size.
func (z Sizer) ragConfidence(r *RAGConfidence) int {
	n := z.Num(`,"rag_confidence":{"overall_confidence":`, r.OverallConfidence) + z.Num(`,"top_score":`, r.TopScore) +
		z.Num(`,"score_gap":`, r.ScoreGap) + z.Num(`,"score_spread":`, r.ScoreSpread) +
		z.Num(`,"consensus_count":`, float64(r.ConsensusCount)) + z.Num(`,"bm25_dense_agreement":`, r.BM25DenseAgreement) +
		z.Num(`,"reranker_impact":`, r.RerankerImpact) + z.Num(`,"graph_support":false,"document_diversity":`, r.DocumentDiversity) +
		z.Str(`,"interpretation":`, r.Interpretation) + len(`,"should_flag_for_review":false}`)
	if r.GraphSupport {
		n-- // "true" is a byte shorter than "false"
	}
	if r.ShouldFlagForReview {
		n--
	}
	return n
}

// outcome is appendChunkOutcome's size (its fast path writes what
// appendChunkOutcomeKeys writes).
func (z Sizer) outcome(comma bool, c *ChunkOutcome) int {
	n := z.Str(`{"id":`, c.ID) + z.Str(`,"doc_id":`, c.DocID) + z.Str(`,"tag":`, c.Tag) +
		z.Str(`,"kept":false,"reason":`, c.Reason) + z.Num(`,"score":`, c.Score) + 1
	if comma {
		n++
	}
	if c.Kept {
		n-- // "true" is a byte shorter than "false"
	}
	if c.HasQuality {
		n += z.Num(`,"quality":`, c.Quality)
	}
	if c.HasVector {
		n += z.Num(`,"vector":`, c.Vector)
	}
	if c.HasBM25 {
		n += z.Num(`,"bm25":`, c.BM25)
	}
	if c.HasFused {
		n += z.Num(`,"fused":`, c.Fused)
	}
	return n
}

// GapEvent is AppendGapEvent's size.
func (z Sizer) GapEvent(g *GapEvent) int {
	if g == nil {
		return len("null")
	}
	n := z.Str(`{"kind":`, g.Kind) + z.Str(`,"query":`, g.Query)
	for i, x := range g.QueryEmbedding {
		if i == 0 {
			n += z.Num(`,"query_embedding":[`, x)
		} else {
			n += z.Num(",", x)
		}
	}
	if len(g.QueryEmbedding) > 0 {
		n++
	}
	n += z.Num(`,"confidence":`, g.Confidence) + z.signals(`,"signals":`, g.Signals) + len(`,"top_chunks":[`)
	for i := range g.TopChunks {
		c := &g.TopChunks[i]
		n += z.Str(`{"id":`, c.ID) + z.Str(`,"doc_id":`, c.DocID) + z.Num(`,"score":`, c.Score) + 1
		if i > 0 {
			n++
		}
	}
	return n + len("]}")
}

// DecisionSize is the exact size of d's JSON, or 0 when the cheap bound
// already shows it within limit (and the exact walk is spared).
func DecisionSize(d *Decision, held Held, limit int) int {
	if (Sizer{}).Decision(d, held) <= limit {
		return 0
	}
	return Sizer{Exact: true}.Decision(d, held)
}
