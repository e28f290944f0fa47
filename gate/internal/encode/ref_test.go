package encode

import (
	"math"
	"strconv"
	"testing"

	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/gate/wire"
	"github.com/ctxgate/ctxgate/internal/testenv"
	"github.com/ctxgate/ctxgate/internal/testgolden"
)

// The decision encoders as they were before they wrote keys and values with
// one capacity check each (jsonx.AppendKeyString, AppendKeyFloat) and handled
// the sources block's line breaks and non-ASCII runs in place: the reference
// the fast ones must match byte for byte (TestEncodersMatchRef,
// FuzzEncodersMatchRef).

func appendDecisionRef(dst []byte, d *Decision) []byte {
	// Grow once to about the final size: the prompt dominates a large
	// decision, and growing by doubling from nil copied it several times.
	if need := decisionSizeHint(d); cap(dst)-len(dst) < need {
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
	dst = appendBoolRef(dst, d.FlagForReview)
	dst = append(dst, `,"query_type":`...)
	dst = jsonx.AppendString(dst, d.QueryType)
	dst = append(dst, `,"signals":`...)
	dst = appendSignalsRef(dst, d.Signals)
	if r := d.RAGConfidence; r != nil {
		dst = append(dst, `,"rag_confidence":{"overall_confidence":`...)
		dst = jsonx.AppendFloat(dst, r.OverallConfidence)
		dst = append(dst, `,"top_score":`...)
		dst = jsonx.AppendFloat(dst, r.TopScore)
		dst = append(dst, `,"score_gap":`...)
		dst = jsonx.AppendFloat(dst, r.ScoreGap)
		dst = append(dst, `,"score_spread":`...)
		dst = jsonx.AppendFloat(dst, r.ScoreSpread)
		dst = append(dst, `,"consensus_count":`...)
		dst = strconv.AppendInt(dst, int64(r.ConsensusCount), 10)
		dst = append(dst, `,"bm25_dense_agreement":`...)
		dst = jsonx.AppendFloat(dst, r.BM25DenseAgreement)
		dst = append(dst, `,"reranker_impact":`...)
		dst = jsonx.AppendFloat(dst, r.RerankerImpact)
		dst = append(dst, `,"graph_support":`...)
		dst = appendBoolRef(dst, r.GraphSupport)
		dst = append(dst, `,"document_diversity":`...)
		dst = jsonx.AppendFloat(dst, r.DocumentDiversity)
		dst = append(dst, `,"interpretation":`...)
		dst = jsonx.AppendString(dst, r.Interpretation)
		dst = append(dst, `,"should_flag_for_review":`...)
		dst = appendBoolRef(dst, r.ShouldFlagForReview)
		dst = append(dst, '}')
	}
	dst = append(dst, `,"chunks":[`...)
	for i := range d.Chunks {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendChunkOutcomeRef(dst, &d.Chunks[i])
	}
	dst = append(dst, `],"prompt":`...)
	if p := d.Prompt; p != nil {
		dst = append(dst, `{"instructions":`...)
		dst = jsonx.AppendString(dst, p.Instructions)
		dst = append(dst, `,"sources":`...)
		// A held sources block has its own oracle, the two-pass build
		// (gate: TestSourcesJSONMatchesTwoPass, FuzzSourcesJSON).
		dst = jsonx.AppendString(dst, p.Sources)
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
	dst = appendStringsRef(dst, d.MissingAspects)
	dst = append(dst, `,"confidence_factors":`...)
	dst = appendStringsRef(dst, d.ConfidenceFactors)
	dst = append(dst, `,"recommendations":`...)
	dst = appendStringsRef(dst, d.Recommendations)
	if len(d.Warnings) > 0 {
		dst = append(dst, `,"warnings":[`...)
		for i, w := range d.Warnings {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"code":`...)
			dst = jsonx.AppendString(dst, w.Code)
			dst = append(dst, `,"message":`...)
			dst = jsonx.AppendString(dst, w.Message)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"gap_event":`...)
	dst = appendGapEventRef(dst, d.GapEvent)
	dst = append(dst, `,"policy":{"name":`...)
	dst = jsonx.AppendString(dst, d.Policy.Name)
	dst = append(dst, `,"version":`...)
	dst = jsonx.AppendString(dst, d.Policy.Version)
	dst = append(dst, `,"sha256":`...)
	dst = jsonx.AppendString(dst, d.Policy.SHA256)
	return append(dst, "}}"...)
}

func appendChunkOutcomeRef(dst []byte, c *ChunkOutcome) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsonx.AppendString(dst, c.ID)
	dst = append(dst, `,"doc_id":`...)
	dst = jsonx.AppendString(dst, c.DocID)
	dst = append(dst, `,"tag":`...)
	dst = jsonx.AppendString(dst, c.Tag)
	dst = append(dst, `,"kept":`...)
	dst = appendBoolRef(dst, c.Kept)
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

func appendSignalsRef(dst []byte, ss []Signal) []byte {
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

func appendStringsRef(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendString(dst, s)
	}
	return append(dst, ']')
}

func appendBoolRef(dst []byte, b bool) []byte {
	if b {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

func appendGapEventRef(dst []byte, g *GapEvent) []byte {
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
	dst = appendSignalsRef(dst, g.Signals)
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

func appendValidationRef(dst []byte, v *Validation) []byte {
	dst = append(dst, `{"soft_refusal":`...)
	dst = appendBoolRef(dst, v.SoftRefusal)
	dst = append(dst, `,"cited":`...)
	dst = appendStringsRef(dst, v.Cited)
	dst = append(dst, `,"unknown":`...)
	dst = appendStringsRef(dst, v.Unknown)
	dst = append(dst, `,"uncited_sentences":`...)
	dst = appendStringsRef(dst, v.UncitedSentences)
	dst = append(dst, `,"gap_event":`...)
	dst = appendGapEventRef(dst, v.GapEvent)
	return append(dst, '}')
}

// checkEncodersRef compares every encoder with its reference on d and on a
// validation built from d's parts, appending to a prefix.
func checkEncodersRef(t *testing.T, d *Decision) {
	t.Helper()
	got, want := AppendDecision([]byte("p:"), d, nil), appendDecisionRef([]byte("p:"), d)
	if string(got) != string(want) {
		t.Fatalf("AppendDecision:\n%s\nreference:\n%s", got, want)
	}
	// From a full buffer: every writer's grow path.
	b := make([]byte, 2, 2)
	copy(b, "p:")
	if got := AppendDecision(b, d, nil); string(got) != string(want) {
		t.Fatalf("AppendDecision from a full buffer:\n%s\nreference:\n%s", got, want)
	}
	v := &Validation{SoftRefusal: d.FlagForReview, Cited: d.MissingAspects, Unknown: d.ConfidenceFactors,
		UncitedSentences: d.Recommendations, GapEvent: d.GapEvent}
	if got, want := AppendValidation([]byte("p:"), v), appendValidationRef([]byte("p:"), v); string(got) != string(want) {
		t.Fatalf("AppendValidation:\n%s\nreference:\n%s", got, want)
	}
	if got, want := AppendGapEvent(b[:2:2], d.GapEvent), appendGapEventRef([]byte("p:"), d.GapEvent); string(got) != string(want) {
		t.Fatalf("AppendGapEvent:\n%s\nreference:\n%s", got, want)
	}
}

// fuzzDecision puts s, u and the numbers in every string and number field
// of a decision, with flags from bits.
func fuzzDecision(s, u string, x, y float64, bits uint8) *Decision {
	on := func(i uint) bool { return bits>>i&1 == 1 }
	d := &Decision{Action: wire.Action(s), Level: wire.Level(u), Confidence: x, Band: u, Interpretation: s, FlagForReview: on(0),
		QueryType: u, Signals: []Signal{{Name: s, Value: x}, {Name: u, Value: y}}, Caveat: s + u,
		Chunks: []ChunkOutcome{{ID: s, DocID: u, Tag: s, Kept: on(1), Reason: u, Score: y, Quality: x, HasQuality: on(2),
			Vector: y, HasVector: on(3), BM25: x * y, HasBM25: on(4), Fused: -x, HasFused: on(5)}, {ID: u, Score: x}},
		Policy: PolicyRef{Name: s, Version: u, SHA256: s}}
	if on(6) {
		d.Prompt = &Prompt{Instructions: s, Sources: u, Minimal: s + u}
		d.MissingAspects, d.Recommendations = []string{s, u}, []string{u}
	} else {
		d.Refusal = &Refusal{Type: u, Message: s}
		d.ConfidenceFactors = []string{s}
		d.Signals = nil
	}
	if on(2) {
		d.Warnings = []Warning{{Code: s, Message: u}}
		if on(4) {
			d.Warnings = append(d.Warnings, Warning{Code: u, Message: s + u})
		}
	}
	if on(1) != on(3) {
		d.RAGConfidence = &RAGConfidence{OverallConfidence: x, TopScore: y, ScoreGap: x * y, ScoreSpread: -y,
			ConsensusCount: int(bits), BM25DenseAgreement: x / 3, RerankerImpact: y / 7, GraphSupport: on(4),
			DocumentDiversity: x, Interpretation: s, ShouldFlagForReview: on(5)}
	}
	if on(7) {
		d.GapEvent = &GapEvent{Kind: s, Query: u, QueryEmbedding: []float64{x, y, x / 3}, Confidence: y,
			Signals: d.Signals, TopChunks: []GapChunk{{ID: s, DocID: u, Score: x}, {ID: u, Score: y}}}
		if on(0) {
			d.GapEvent.QueryEmbedding = nil
		}
	}
	return d
}

// encoderCases are strings for every field: plain, escaped, prompt tags,
// invalid UTF-8, line separators.
var encoderCases = []string{
	"", "plain text", "a longer plain text, past one block", "0123456<sources>", "01234567[S1]", "\"quoted\" & <b>",
	"caf\u00e9 \u4e2d\u6587 [S2] \u2028", "bad\xe2\x80<sources", "tab\tand\x00ctl\n[s 3, S4]\r\n", "</", "<sources>",
	"\xff<sources\xfe", "[S1, S2] [s12]", "title\n[S4]\r<sources", "\u2029 > & \\ / \x7f",
}

// TestEncodersMatchRef: the encoders give the reference's bytes for every
// golden decision (read back from its file, and written again to exactly
// its bytes), the test decisions and every string case in every field.
func TestEncodersMatchRef(t *testing.T) {
	checkEncodersRef(t, fullDecision())
	checkEncodersRef(t, &Decision{})
	cases, err := testgolden.Load(goldenRoot)
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, c := range cases {
		d, ok := readDecision(t, c.Decision)
		if !ok {
			continue // an error JSON
		}
		if got := AppendDecision(nil, d, nil); string(got) != string(c.Decision) {
			t.Fatalf("%s: the decision read back encodes as\n%s\nnot\n%s", c.DecisionPath, got, c.Decision)
		}
		checkEncodersRef(t, d)
		read++
	}
	if read < 20 {
		testenv.Missing(t, "fewer than 20 golden decisions")
	}
	nums := []float64{0, 1, 0.5, 2.0 / 3, -1e-7, 123.4567891, 1e21, math.NaN(), math.Inf(-1)}
	for i, s := range encoderCases {
		for bits := 0; bits < 256; bits += 37 {
			checkEncodersRef(t, fuzzDecision(s, encoderCases[(i+1)%len(encoderCases)], nums[i%len(nums)], nums[(i+bits)%len(nums)], uint8(bits)))
		}
	}
}

func FuzzEncodersMatchRef(f *testing.F) {
	for i, s := range encoderCases {
		f.Add(s, encoderCases[(i+1)%len(encoderCases)], float64(i)/7, -float64(i)*1e3, uint8(i*37))
	}
	f.Fuzz(func(t *testing.T, s, u string, x, y float64, bits uint8) {
		checkEncodersRef(t, fuzzDecision(s, u, x, y, bits))
	})
}
