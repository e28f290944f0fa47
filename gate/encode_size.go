package gate

import (
	"strconv"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// The output limit (limits.max_decision_bytes). Escaping makes a decision
// larger than the request it came from: a '<' in a chunk text or id is six
// bytes of JSON, a control character six, and the sources block and the
// chunk list both carry the chunks' strings. 32 chunk texts of 64 KiB of
// '<' (2 MiB, max_total_bytes exactly) were a 12.6 MB decision, and 1000
// chunk ids of '<' (a 4 MiB request) 25 MB: the TinyGo module trapped,
// out of memory, and every host wrote whatever it was. So the size a
// decision or a validation would have is known before any of it is written
// (or, for Decide, before it is returned), and over the limit it is a
// limit error instead.
//
// The size functions walk the value the way its writer does and count what
// it would write: exactly (jsonx.StringLen, FloatLen, escapedJSONLen), or,
// first, as a cheap upper bound (every string byte escaped to its longest
// form) that spares the exact walk whenever the bound is under the limit,
// as it is for every ordinary request. TestEvaluateMatchesDecide and
// FuzzDecisionSize hold the exact count to the writer's bytes.

// outputSizer counts a JSON output's bytes, exactly or as an upper bound.
type outputSizer struct{ exact bool }

// str is the size of s written as a JSON string after key.
func (z outputSizer) str(key, s string) int {
	if z.exact {
		return len(key) + jsonx.StringLen(s)
	}
	return len(key) + 2 + 6*len(s) // six bytes (\u003c) is the most one byte takes
}

// num is the size of x written as a JSON number after key.
func (z outputSizer) num(key string, x float64) int {
	if !z.exact && x > -(1<<33) && x < 1<<33 {
		return len(key) + jsonx.MaxPutFloat
	}
	return len(key) + jsonx.FloatLen(x)
}

// escaped is appendEscapedJSON's size for s (a chunk string in the sources
// block).
func (z outputSizer) escaped(s string, oneLine bool) int {
	if z.exact {
		return escapedJSONLen(s, oneLine)
	}
	return 10 * len(s) // a '<' that starts a fence tag: \u0026lt;
}

// strs is appendStrings' size.
func (z outputSizer) strs(key string, ss []string) int {
	n := len(key) + 2
	for i, s := range ss {
		n += z.str("", s)
		if i > 0 {
			n++
		}
	}
	return n
}

// signals is appendSignals' size.
func (z outputSizer) signals(key string, ss []Signal) int {
	n := len(key) + 2
	for i := range ss {
		n += z.str("", ss[i].Name) + z.num(":", ss[i].Value)
		if i > 0 {
			n++
		}
	}
	return n
}

// decision is appendDecision's size for d (its sources from later's chunks
// when later stands for its prompt).
func (z outputSizer) decision(d *Decision, later *sourcesLater) int {
	n := z.str(`{"action":`, string(d.Action)) + z.str(`,"level":`, string(d.Level)) +
		z.num(`,"confidence":`, d.Confidence) + z.str(`,"band":`, d.Band) +
		z.str(`,"interpretation":`, d.Interpretation)
	if d.FlagForReview {
		n += z.str(`,"flag_for_review":true,"query_type":`, d.QueryType)
	} else {
		n += z.str(`,"flag_for_review":false,"query_type":`, d.QueryType)
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
		n += z.str(`],"prompt":{"instructions":`, p.Instructions)
		if later.stands(p) {
			n += len(`,"sources":`) + z.sources(later.chunks, later.warning)
		} else {
			n += z.str(`,"sources":`, p.Sources)
		}
		n += z.str(`,"minimal":`, p.Minimal) + z.str(`},"caveat":`, d.Caveat)
	} else {
		n += z.str(`],"prompt":null,"caveat":`, d.Caveat)
	}
	if r := d.Refusal; r != nil {
		n += z.str(`,"refusal":{"type":`, r.Type) + z.str(`,"message":`, r.Message) +
			z.strs(`},"missing_aspects":`, d.MissingAspects)
	} else {
		n += z.strs(`,"refusal":null,"missing_aspects":`, d.MissingAspects)
	}
	n += z.strs(`,"confidence_factors":`, d.ConfidenceFactors) + z.strs(`,"recommendations":`, d.Recommendations)
	n += len(`,"gap_event":`) + z.gapEvent(d.GapEvent)
	return n + z.str(`,"policy":{"name":`, d.Policy.Name) + z.str(`,"version":`, d.Policy.Version) +
		z.str(`,"sha256":`, d.Policy.SHA256) + len("}}")
}

// ragConfidence is appendRAGConfidence's size.
func (z outputSizer) ragConfidence(r *RAGConfidence) int {
	n := z.num(`,"rag_confidence":{"overall_confidence":`, r.OverallConfidence) + z.num(`,"top_score":`, r.TopScore) +
		z.num(`,"score_gap":`, r.ScoreGap) + z.num(`,"score_spread":`, r.ScoreSpread) +
		z.num(`,"consensus_count":`, float64(r.ConsensusCount)) + z.num(`,"bm25_dense_agreement":`, r.BM25DenseAgreement) +
		z.num(`,"reranker_impact":`, r.RerankerImpact) + z.num(`,"graph_support":false,"document_diversity":`, r.DocumentDiversity) +
		z.str(`,"interpretation":`, r.Interpretation) + len(`,"should_flag_for_review":false}`)
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
func (z outputSizer) outcome(comma bool, c *ChunkOutcome) int {
	n := z.str(`{"id":`, c.ID) + z.str(`,"doc_id":`, c.DocID) + z.str(`,"tag":`, c.Tag) +
		z.str(`,"kept":false,"reason":`, c.Reason) + z.num(`,"score":`, c.Score) + 1
	if comma {
		n++
	}
	if c.Kept {
		n-- // "true" is a byte shorter than "false"
	}
	if c.HasQuality {
		n += z.num(`,"quality":`, c.Quality)
	}
	if c.HasVector {
		n += z.num(`,"vector":`, c.Vector)
	}
	if c.HasBM25 {
		n += z.num(`,"bm25":`, c.BM25)
	}
	if c.HasFused {
		n += z.num(`,"fused":`, c.Fused)
	}
	return n
}

// sources is appendSources' size: the <sources> block as a JSON string.
func (z outputSizer) sources(chunks []*Chunk, warning string) int {
	n := len(`"\u003csources\u003e\n`) + len(`\u003c/sources\u003e"`)
	for t, c := range chunks {
		if t > 0 {
			n += len(`\n`)
		}
		n += len("[S]") + intLen(t+1)
		if c.DocID != "" {
			n += len(" (doc: )") + z.escaped(c.DocID, true)
		}
		if c.Title != "" {
			n += 1 + z.escaped(c.Title, true)
		}
		n += len(`\n`)
		if c.Untrusted {
			n += len(`\u003cuntrusted\u003e\n`) + z.str("", warning) - 2 + len(`\n`) +
				z.escaped(c.Text, false) + len(`\n\u003c/untrusted\u003e\n`)
		} else {
			n += z.escaped(c.Text, false) + len(`\n`)
		}
	}
	return n
}

// gapEvent is AppendGapEvent's size.
func (z outputSizer) gapEvent(g *GapEvent) int {
	if g == nil {
		return len("null")
	}
	n := z.str(`{"kind":`, g.Kind) + z.str(`,"query":`, g.Query)
	for i, x := range g.QueryEmbedding {
		if i == 0 {
			n += z.num(`,"query_embedding":[`, x)
		} else {
			n += z.num(",", x)
		}
	}
	if len(g.QueryEmbedding) > 0 {
		n++
	}
	n += z.num(`,"confidence":`, g.Confidence) + z.signals(`,"signals":`, g.Signals) + len(`,"top_chunks":[`)
	for i := range g.TopChunks {
		c := &g.TopChunks[i]
		n += z.str(`{"id":`, c.ID) + z.str(`,"doc_id":`, c.DocID) + z.num(`,"score":`, c.Score) + 1
		if i > 0 {
			n++
		}
	}
	return n + len("]}")
}

// spans is appendSpans' size.
func (z outputSizer) spans(s string, at []int) int {
	n := 2
	for i := 0; i+1 < len(at); i += 2 {
		n += z.str("", s[at[i]:at[i+1]])
		if i > 0 {
			n++
		}
	}
	return n
}

func intLen(n int) int { return len(strconv.Itoa(n)) }

// jsonEscLen is the length of what jsonx.AppendStringContent writes for an
// ASCII byte, 1 for a byte it copies.
var jsonEscLen = func() (t [128]uint8) {
	for c := range t {
		n := jsonx.StringContentLen(string(rune(c)))
		t[c] = uint8(n)
	}
	return t
}()

// escapedJSONLen is len(appendEscapedJSON(nil, s, oneLine)): the same walk,
// counting.
func escapedJSONLen(s string, oneLine bool) int {
	n := 0
	for i := 0; ; {
		k := jsonx.PlainLen(s[i:], '[')
		n += k
		if i += k; i == len(s) {
			return n
		}
		switch c := s[i]; {
		case c == '<':
			// A run of '<' at once: only the last can start a fence tag
			// (a call per byte was most of a text of '<'s cost).
			j := i + 1
			for j < len(s) && s[j] == '<' {
				j++
			}
			n += (j - i - 1) * len(`\u003c`)
			if formsFenceTag(s[j:]) {
				n += len(`\u0026lt;`)
			} else {
				n += len(`\u003c`)
			}
			i = j
		case c == '[':
			if !formsSourceTag(s[i+1:]) {
				n++
				i++
				break
			}
			j := sourceTagEnd(s, i+1)
			n += 1 + j - (i + 1)
			if j < len(s) && s[j] == ']' {
				n++
				j++
			}
			i = j
		case oneLine && (c == '\n' || c == '\r'):
			n++
			i++
		case c == '\n':
			n += 2
			i++
		case c < 0x80:
			// Another byte the JSON escaper wants (a control byte, '"',
			// '\\', '>', '&'), and those like it after it.
			start := i
			for i < len(s) && s[i] < 0x80 && jsonEscLen[s[i]] > 1 && s[i] != '<' && s[i] != '\n' && (s[i] != '\r' || !oneLine) {
				n += int(jsonEscLen[s[i]])
				i++
			}
			if i == start { // not reached: PlainLen stops only at such bytes
				n += jsonx.StringContentLen(s[i : i+1])
				i++
			}
		default:
			j, k := escapedRun(s, i)
			n += k - i
			if k < j {
				n += jsonx.StringContentLen(s[k:j])
			}
			i = j
		}
	}
}

// decisionSize is the exact size of d's JSON, or 0 when the cheap bound
// already shows it within limit (and the exact walk is spared).
func decisionSize(d *Decision, later *sourcesLater, limit int) int {
	if (outputSizer{}).decision(d, later) <= limit {
		return 0
	}
	return outputSizer{exact: true}.decision(d, later)
}

// maxDecisionBytes is the policy's max_decision_bytes (its default for a
// policy built without it).
func (l *Limits) maxDecisionBytes() int {
	if l.MaxDecisionBytes > 0 {
		return l.MaxDecisionBytes
	}
	return DefaultLimits().MaxDecisionBytes
}

// outputLimitError is the error of an output over max_decision_bytes.
func outputLimitError(field, what string, size, limit int) *Error {
	return limitError(field, "the "+what+" would be "+strconv.Itoa(size)+" bytes of JSON", limit, "max_decision_bytes")
}
