// Package encode writes the gate's output JSON: decisions, gap events,
// answer validations and errors, byte for byte the same in every build
// and host (fixed key order, numbers rounded to 6 decimals by jsonx).
package encode

import (
	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/gate/wire"
)

// Held writes a prompt's sources block that is not in Prompt.Sources.
type Held interface {
	// Holds reports whether it writes p's sources.
	Holds(p *wire.Prompt) bool
	// SizeHint is about the size of the block's JSON.
	SizeHint() int
	// AppendSourcesJSON appends the block as a JSON string, quotes included.
	AppendSourcesJSON(dst []byte) []byte
	// SourcesSize is the size of what AppendSourcesJSON writes, exactly or
	// as an upper bound (Sizer).
	SourcesSize(z Sizer) int
}

func heldSize(held Held, p *wire.Prompt) int {
	if held == nil || !held.Holds(p) {
		return 0
	}
	return held.SizeHint()
}

// AppendDecision appends the decision JSON to dst: compact, no trailing
// newline, fields in the order of the Decision type's comments, numbers
// rounded to 6 decimal places (jsonx.AppendFloat). Lists are written as []
// when empty and optional objects as null, so every decision has the same
// keys and a host can read it without presence checks. The bytes depend only
// on d, never on the build or the host.
//
// When held holds d's prompt's sources (the gate keeps a decision's kept
// chunks rather than a sources string), the block is written by held,
// straight into the JSON; held may be nil.
func AppendDecision(dst []byte, d *Decision, held Held) []byte {
	return AppendDecisionSized(dst, d, held, 0)
}

// AppendDecisionSized is AppendDecision for a decision whose JSON is known
// to be size bytes (DecisionSize measured it), which it then allocates at
// once; size 0 means unknown (a size hint is used).
func AppendDecisionSized(dst []byte, d *Decision, held Held, size int) []byte {
	// Grow once to about the final size: the prompt dominates a large
	// decision, and growing by doubling from nil copied it several times.
	need := size
	if need <= 0 {
		need = decisionSizeHint(d) + heldSize(held, d.Prompt)
	}
	if cap(dst)-len(dst) < need {
		dst = append(make([]byte, 0, len(dst)+need), dst...)
	}
	// One call per key and value (jsonx.AppendKeyString, AppendKeyFloat):
	// under TinyGo every append is a runtime call, and the calls were most
	// of the encoding time.
	dst = jsonx.AppendKeyString(dst, `{"action":`, string(d.Action))
	dst = jsonx.AppendKeyString(dst, `,"level":`, string(d.Level))
	dst = jsonx.AppendKeyFloat(dst, `,"confidence":`, d.Confidence)
	dst = jsonx.AppendKeyString(dst, `,"band":`, d.Band)
	dst = jsonx.AppendKeyString(dst, `,"interpretation":`, d.Interpretation)
	if d.FlagForReview {
		dst = jsonx.AppendKeyString(dst, `,"flag_for_review":true,"query_type":`, d.QueryType)
	} else {
		dst = jsonx.AppendKeyString(dst, `,"flag_for_review":false,"query_type":`, d.QueryType)
	}
	dst = appendSignals(dst, `,"signals":`, d.Signals)
	if r := d.RAGConfidence; r != nil {
		dst = appendRAGConfidence(dst, r)
	}
	dst = append(dst, `,"chunks":[`...)
	for i := range d.Chunks {
		dst = appendChunkOutcome(dst, i > 0, &d.Chunks[i])
	}
	if p := d.Prompt; p != nil {
		dst = jsonx.AppendKeyString(dst, `],"prompt":{"instructions":`, p.Instructions)
		if held != nil && held.Holds(p) {
			dst = append(dst, `,"sources":`...)
			dst = held.AppendSourcesJSON(dst)
		} else {
			dst = jsonx.AppendKeyString(dst, `,"sources":`, p.Sources)
		}
		dst = jsonx.AppendKeyString(dst, `,"minimal":`, p.Minimal)
		dst = jsonx.AppendKeyString(dst, `},"caveat":`, d.Caveat)
	} else {
		dst = jsonx.AppendKeyString(dst, `],"prompt":null,"caveat":`, d.Caveat)
	}
	if r := d.Refusal; r != nil {
		dst = jsonx.AppendKeyString(dst, `,"refusal":{"type":`, r.Type)
		dst = jsonx.AppendKeyString(dst, `,"message":`, r.Message)
		dst = appendStrings(dst, `},"missing_aspects":`, d.MissingAspects)
	} else {
		dst = appendStrings(dst, `,"refusal":null,"missing_aspects":`, d.MissingAspects)
	}
	dst = appendStrings(dst, `,"confidence_factors":`, d.ConfidenceFactors)
	dst = appendStrings(dst, `,"recommendations":`, d.Recommendations)
	if len(d.Warnings) > 0 {
		dst = appendWarnings(dst, d.Warnings)
	}
	dst = append(dst, `,"gap_event":`...)
	dst = AppendGapEvent(dst, d.GapEvent)
	dst = jsonx.AppendKeyString(dst, `,"policy":{"name":`, d.Policy.Name)
	dst = jsonx.AppendKeyString(dst, `,"version":`, d.Policy.Version)
	dst = jsonx.AppendKeyString(dst, `,"sha256":`, d.Policy.SHA256)
	return append(dst, "}}"...)
}

// appendWarnings writes `,"warnings":` and ws as an array of {"code",
// "message"} objects. It is left out of a decision without warnings, so
// such a decision keeps the bytes it had before warnings existed.
func appendWarnings(dst []byte, ws []Warning) []byte {
	for i := range ws {
		if i == 0 {
			dst = jsonx.AppendKeyString(dst, `,"warnings":[{"code":`, ws[i].Code)
		} else {
			dst = jsonx.AppendKeyString(dst, `,{"code":`, ws[i].Code)
		}
		dst = jsonx.AppendKeyString(dst, `,"message":`, ws[i].Message)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendRAGConfidence writes `,"rag_confidence":` and r, keys in the order of
// the confidence-scoring scorer's to_dict(). It is left out of a decision
// whose policy does not report it (so every other decision keeps its bytes).
func appendRAGConfidence(dst []byte, r *RAGConfidence) []byte {
	dst = jsonx.AppendKeyFloat(dst, `,"rag_confidence":{"overall_confidence":`, r.OverallConfidence)
	dst = jsonx.AppendKeyFloat(dst, `,"top_score":`, r.TopScore)
	dst = jsonx.AppendKeyFloat(dst, `,"score_gap":`, r.ScoreGap)
	dst = jsonx.AppendKeyFloat(dst, `,"score_spread":`, r.ScoreSpread)
	dst = jsonx.AppendKeyFloat(dst, `,"consensus_count":`, float64(r.ConsensusCount))
	dst = jsonx.AppendKeyFloat(dst, `,"bm25_dense_agreement":`, r.BM25DenseAgreement)
	dst = jsonx.AppendKeyFloat(dst, `,"reranker_impact":`, r.RerankerImpact)
	if r.GraphSupport {
		dst = jsonx.AppendKeyFloat(dst, `,"graph_support":true,"document_diversity":`, r.DocumentDiversity)
	} else {
		dst = jsonx.AppendKeyFloat(dst, `,"graph_support":false,"document_diversity":`, r.DocumentDiversity)
	}
	dst = jsonx.AppendKeyString(dst, `,"interpretation":`, r.Interpretation)
	if r.ShouldFlagForReview {
		return append(dst, `,"should_flag_for_review":true}`...)
	}
	return append(dst, `,"should_flag_for_review":false}`...)
}

// appendChunkOutcome writes id, doc_id, tag, kept, reason, score, then the
// optional per-signal scores only when set, so a policy that does not compute
// quality does not report a misleading quality of 0; comma says whether a
// ',' goes first.
//
// The object is written whole after one capacity check, its strings checked
// as they are copied (jsonx.PutPlain) and its numbers written in place
// (jsonx.PutFloat): ids, tags and reasons need no escaping and scores are
// small, and under TinyGo a call per key and value (AppendKeyString's scan
// and copies, AppendKeyFloat's capacity check) cost 0.7-0.9 µs a chunk in
// the module, most of a 100-chunk decision's encoding. Anything else (a
// string to escape, a number past 2^33) takes appendChunkOutcomeKeys.
func appendChunkOutcome(dst []byte, comma bool, c *ChunkOutcome) []byte {
	l := len(dst)
	need := len(c.ID) + len(c.DocID) + len(c.Tag) + len(c.Reason) + chunkOutcomeRoom
	if cap(dst)-l < need {
		dst = append(make([]byte, 0, 2*cap(dst)+need), dst...)
	}
	b := dst[l : l+need]
	k := 0
	if comma {
		b[0] = ','
		k = 1
	}
	k += copy(b[k:], `{"id":"`)
	n := jsonx.PutPlain(b[k:], c.ID)
	if n < 0 {
		return appendChunkOutcomeKeys(dst[:l], comma, c)
	}
	k += n
	k += copy(b[k:], `","doc_id":"`)
	if n = jsonx.PutPlain(b[k:], c.DocID); n < 0 {
		return appendChunkOutcomeKeys(dst[:l], comma, c)
	}
	k += n
	k += copy(b[k:], `","tag":"`)
	if n = jsonx.PutPlain(b[k:], c.Tag); n < 0 {
		return appendChunkOutcomeKeys(dst[:l], comma, c)
	}
	k += n
	if c.Kept {
		k += copy(b[k:], `","kept":true,"reason":"`)
	} else {
		k += copy(b[k:], `","kept":false,"reason":"`)
	}
	if n = jsonx.PutPlain(b[k:], c.Reason); n < 0 {
		return appendChunkOutcomeKeys(dst[:l], comma, c)
	}
	k += n
	k += copy(b[k:], `","score":`)
	if n = jsonx.PutFloat(b[k:], c.Score); n == 0 {
		return appendChunkOutcomeKeys(dst[:l], comma, c)
	}
	k += n
	if c.HasQuality {
		k += copy(b[k:], `,"quality":`)
		if n = jsonx.PutFloat(b[k:], c.Quality); n == 0 {
			return appendChunkOutcomeKeys(dst[:l], comma, c)
		}
		k += n
	}
	if c.HasVector {
		k += copy(b[k:], `,"vector":`)
		if n = jsonx.PutFloat(b[k:], c.Vector); n == 0 {
			return appendChunkOutcomeKeys(dst[:l], comma, c)
		}
		k += n
	}
	if c.HasBM25 {
		k += copy(b[k:], `,"bm25":`)
		if n = jsonx.PutFloat(b[k:], c.BM25); n == 0 {
			return appendChunkOutcomeKeys(dst[:l], comma, c)
		}
		k += n
	}
	if c.HasFused {
		k += copy(b[k:], `,"fused":`)
		if n = jsonx.PutFloat(b[k:], c.Fused); n == 0 {
			return appendChunkOutcomeKeys(dst[:l], comma, c)
		}
		k += n
	}
	b[k] = '}'
	return dst[:l+k+1]
}

// chunkOutcomeRoom is appendChunkOutcome's room for everything but the
// strings: the keys (104 bytes with the comma and brace) and five numbers.
const chunkOutcomeRoom = 104 + 5*jsonx.MaxPutFloat

// appendChunkOutcomeKeys is appendChunkOutcome key by key, escaping what
// needs it.
func appendChunkOutcomeKeys(dst []byte, comma bool, c *ChunkOutcome) []byte {
	if comma {
		dst = jsonx.AppendKeyString(dst, `,{"id":`, c.ID)
	} else {
		dst = jsonx.AppendKeyString(dst, `{"id":`, c.ID)
	}
	dst = jsonx.AppendKeyString(dst, `,"doc_id":`, c.DocID)
	dst = jsonx.AppendKeyString(dst, `,"tag":`, c.Tag)
	if c.Kept {
		dst = jsonx.AppendKeyString(dst, `,"kept":true,"reason":`, c.Reason)
	} else {
		dst = jsonx.AppendKeyString(dst, `,"kept":false,"reason":`, c.Reason)
	}
	dst = jsonx.AppendKeyFloat(dst, `,"score":`, c.Score)
	if c.HasQuality {
		dst = jsonx.AppendKeyFloat(dst, `,"quality":`, c.Quality)
	}
	if c.HasVector {
		dst = jsonx.AppendKeyFloat(dst, `,"vector":`, c.Vector)
	}
	if c.HasBM25 {
		dst = jsonx.AppendKeyFloat(dst, `,"bm25":`, c.BM25)
	}
	if c.HasFused {
		dst = jsonx.AppendKeyFloat(dst, `,"fused":`, c.Fused)
	}
	return append(dst, '}')
}

// appendSignals writes key, then signals as one object {name: value} in
// slice order (the engine's fixed computation order), never in map order.
func appendSignals(dst []byte, key string, ss []Signal) []byte {
	if len(ss) == 0 {
		dst = append(dst, key...)
		return append(dst, "{}"...)
	}
	dst = append(dst, key...)
	for i := range ss {
		if i == 0 {
			dst = jsonx.AppendKeyString(dst, "{", ss[i].Name)
		} else {
			dst = jsonx.AppendKeyString(dst, ",", ss[i].Name)
		}
		dst = jsonx.AppendKeyFloat(dst, ":", ss[i].Value)
	}
	return append(dst, '}')
}

// appendStrings writes key, then ss as a JSON array.
func appendStrings(dst []byte, key string, ss []string) []byte {
	if len(ss) == 0 {
		dst = append(dst, key...)
		return append(dst, "[]"...)
	}
	dst = append(dst, key...)
	for i, s := range ss {
		if i == 0 {
			dst = jsonx.AppendKeyString(dst, "[", s)
		} else {
			dst = jsonx.AppendKeyString(dst, ",", s)
		}
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
	if r := d.RAGConfidence; r != nil {
		n += 320 + len(r.Interpretation)
	}
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
	for _, w := range d.Warnings {
		n += len(w.Code) + len(w.Message) + 32
	}
	if g := d.GapEvent; g != nil {
		n += 256 + len(g.Query) + 24*len(g.QueryEmbedding) + 40*len(g.Signals) + 80*len(g.TopChunks)
	}
	return n
}
