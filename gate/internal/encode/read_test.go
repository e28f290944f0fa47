package encode

import (
	"testing"

	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/gate/wire"
)

// goldenRoot is the repository's testdata.
const goldenRoot = "../../../testdata"

// readDecision reads a decision's JSON back into a Decision (ok is false
// for an error JSON), every key the encoder writes.
func readDecision(t *testing.T, b []byte) (*Decision, bool) {
	t.Helper()
	v, err := jsonx.Parse(b, 16)
	if err != nil {
		t.Fatal(err)
	}
	if v.Get("error").Kind() == jsonx.Object {
		return nil, false
	}
	d := &Decision{
		Action: wire.Action(v.Get("action").Str()), Level: wire.Level(v.Get("level").Str()),
		Confidence: v.Get("confidence").Float(), Band: v.Get("band").Str(),
		Interpretation: v.Get("interpretation").Str(), FlagForReview: v.Get("flag_for_review").Bool(),
		QueryType: v.Get("query_type").Str(), Signals: readSignals(v.Get("signals")),
		Caveat: v.Get("caveat").Str(), MissingAspects: readStrings(v.Get("missing_aspects")),
		ConfidenceFactors: readStrings(v.Get("confidence_factors")), Recommendations: readStrings(v.Get("recommendations")),
		GapEvent: readGap(v.Get("gap_event")),
		Policy: PolicyRef{Name: v.Get("policy").Get("name").Str(), Version: v.Get("policy").Get("version").Str(),
			SHA256: v.Get("policy").Get("sha256").Str()},
	}
	if r := v.Get("rag_confidence"); r.Kind() == jsonx.Object {
		d.RAGConfidence = &RAGConfidence{OverallConfidence: r.Get("overall_confidence").Float(),
			TopScore: r.Get("top_score").Float(), ScoreGap: r.Get("score_gap").Float(), ScoreSpread: r.Get("score_spread").Float(),
			ConsensusCount: int(r.Get("consensus_count").Float()), BM25DenseAgreement: r.Get("bm25_dense_agreement").Float(),
			RerankerImpact: r.Get("reranker_impact").Float(), GraphSupport: r.Get("graph_support").Bool(),
			DocumentDiversity: r.Get("document_diversity").Float(), Interpretation: r.Get("interpretation").Str(),
			ShouldFlagForReview: r.Get("should_flag_for_review").Bool()}
	}
	cs := v.Get("chunks")
	d.Chunks = make([]ChunkOutcome, cs.Len())
	for i := range d.Chunks {
		c := cs.Index(i)
		o := &d.Chunks[i]
		o.ID, o.DocID, o.Tag, o.Kept = c.Get("id").Str(), c.Get("doc_id").Str(), c.Get("tag").Str(), c.Get("kept").Bool()
		o.Reason, o.Score = c.Get("reason").Str(), c.Get("score").Float()
		o.Quality, o.HasQuality = c.Get("quality").Float(), c.Get("quality").Kind() == jsonx.Number
		o.Vector, o.HasVector = c.Get("vector").Float(), c.Get("vector").Kind() == jsonx.Number
		o.BM25, o.HasBM25 = c.Get("bm25").Float(), c.Get("bm25").Kind() == jsonx.Number
		o.Fused, o.HasFused = c.Get("fused").Float(), c.Get("fused").Kind() == jsonx.Number
	}
	if ws := v.Get("warnings"); ws.Kind() == jsonx.Array {
		for i := 0; i < ws.Len(); i++ {
			d.Warnings = append(d.Warnings, Warning{Code: ws.Index(i).Get("code").Str(), Message: ws.Index(i).Get("message").Str()})
		}
	}
	if p := v.Get("prompt"); p.Kind() == jsonx.Object {
		d.Prompt = &Prompt{Instructions: p.Get("instructions").Str(), Sources: p.Get("sources").Str(), Minimal: p.Get("minimal").Str()}
	}
	if r := v.Get("refusal"); r.Kind() == jsonx.Object {
		d.Refusal = &Refusal{Type: r.Get("type").Str(), Message: r.Get("message").Str()}
	}
	return d, true
}

func readSignals(v *jsonx.Value) []Signal {
	var out []Signal
	for i := 0; i < v.Len(); i++ {
		out = append(out, Signal{Name: v.Key(i), Value: v.Member(i).Float()})
	}
	return out
}

func readStrings(v *jsonx.Value) []string {
	var out []string
	for i := 0; i < v.Len(); i++ {
		out = append(out, v.Index(i).Str())
	}
	return out
}

func readGap(v *jsonx.Value) *GapEvent {
	if v.Kind() != jsonx.Object {
		return nil
	}
	g := &GapEvent{Kind: v.Get("kind").Str(), Query: v.Get("query").Str(), Confidence: v.Get("confidence").Float(),
		Signals: readSignals(v.Get("signals"))}
	e := v.Get("query_embedding")
	for i := 0; i < e.Len(); i++ {
		g.QueryEmbedding = append(g.QueryEmbedding, e.Index(i).Float())
	}
	tc := v.Get("top_chunks")
	for i := 0; i < tc.Len(); i++ {
		c := tc.Index(i)
		g.TopChunks = append(g.TopChunks, GapChunk{ID: c.Get("id").Str(), DocID: c.Get("doc_id").Str(), Score: c.Get("score").Float()})
	}
	return g
}
