package encode

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/gate/wire"
)

func fullDecision() *Decision {
	return &Decision{
		Action: wire.ActionCaveat, Level: wire.LevelPartial, Confidence: 2.0 / 3, Band: "MEDIUM",
		Interpretation: "Some evidence", FlagForReview: true, QueryType: wire.QueryTypeVectorSearch,
		Signals: []Signal{{Name: "max_similarity", Value: 0.8200000001}, {Name: "coverage", Value: math.Copysign(0, -1)}},
		RAGConfidence: &RAGConfidence{OverallConfidence: 0.775, TopScore: 1.5, ScoreGap: 0.3, ScoreSpread: 0.15,
			ConsensusCount: 2, BM25DenseAgreement: 0.5, GraphSupport: false, DocumentDiversity: 1,
			Interpretation: "MEDIUM - Moderate confidence, review recommended", ShouldFlagForReview: true},
		Chunks: []ChunkOutcome{
			{ID: "a", DocID: "d1", Tag: "S1", Kept: true, Reason: "kept", Score: 0.9,
				Quality: 0.5, HasQuality: true, Vector: 0.82, HasVector: true, BM25: 3.25, HasBM25: true, Fused: 1.0 / 61, HasFused: true},
			{ID: "b</x>", Reason: "below_floor", Score: 0.1},
		},
		Prompt:         &Prompt{Instructions: "Use only sources.\nCite [S1].", Sources: "<sources>\n[S1] text &\n</sources>"},
		Caveat:         "Partial \"evidence\"",
		MissingAspects: []string{"when"},
		Warnings:       []Warning{{Code: "scores_look_like_distances", Message: "vector scores rise <down>"}, {Code: "x", Message: ""}},
		GapEvent: &GapEvent{Kind: "low_confidence", Query: "q", QueryEmbedding: []float64{0.1234567, -1},
			Confidence: 0.3, Signals: []Signal{{Name: "top_score", Value: 0.3}}, TopChunks: []GapChunk{{ID: "a", DocID: "d1", Score: 0.9}}},
		Policy: PolicyRef{Name: "default", Version: "1", SHA256: "ab12"},
	}
}

func TestAppendDecision(t *testing.T) {
	want := `{"action":"caveat","level":"partial","confidence":0.666667,"band":"MEDIUM","interpretation":"Some evidence",` +
		`"flag_for_review":true,"query_type":"vector_search","signals":{"max_similarity":0.82,"coverage":0},` +
		`"rag_confidence":{"overall_confidence":0.775,"top_score":1.5,"score_gap":0.3,"score_spread":0.15,"consensus_count":2,` +
		`"bm25_dense_agreement":0.5,"reranker_impact":0,"graph_support":false,"document_diversity":1,` +
		`"interpretation":"MEDIUM - Moderate confidence, review recommended","should_flag_for_review":true},` +
		`"chunks":[{"id":"a","doc_id":"d1","tag":"S1","kept":true,"reason":"kept","score":0.9,"quality":0.5,"vector":0.82,"bm25":3.25,"fused":0.016393},` +
		`{"id":"b\u003c/x\u003e","doc_id":"","tag":"","kept":false,"reason":"below_floor","score":0.1}],` +
		`"prompt":{"instructions":"Use only sources.\nCite [S1].","sources":"\u003csources\u003e\n[S1] text \u0026\n\u003c/sources\u003e","minimal":""},` +
		`"caveat":"Partial \"evidence\"","refusal":null,"missing_aspects":["when"],"confidence_factors":[],"recommendations":[],` +
		`"warnings":[{"code":"scores_look_like_distances","message":"vector scores rise \u003cdown\u003e"},{"code":"x","message":""}],` +
		`"gap_event":{"kind":"low_confidence","query":"q","query_embedding":[0.123457,-1],"confidence":0.3,"signals":{"top_score":0.3},"top_chunks":[{"id":"a","doc_id":"d1","score":0.9}]},` +
		`"policy":{"name":"default","version":"1","sha256":"ab12"}}`
	got := string(AppendDecision(nil, fullDecision(), nil))
	if got != want {
		t.Errorf("AppendDecision =\n%s\nwant\n%s", got, want)
	}
	// Appends, never overwrites.
	if got2 := string(AppendDecision([]byte("x"), fullDecision(), nil)); got2 != "x"+want {
		t.Error("AppendDecision does not append to dst")
	}
}

func TestAppendDecisionEmpty(t *testing.T) {
	want := `{"action":"refuse","level":"insufficient","confidence":0,"band":"","interpretation":"","flag_for_review":false,` +
		`"query_type":"","signals":{},"chunks":[],"prompt":null,"caveat":"","refusal":{"type":"hard","message":"No."},` +
		`"missing_aspects":[],"confidence_factors":[],"recommendations":[],"gap_event":null,"policy":{"name":"","version":"","sha256":""}}`
	d := &Decision{Action: wire.ActionRefuse, Level: wire.LevelInsufficient, Confidence: math.NaN(), Refusal: &Refusal{Type: "hard", Message: "No."}}
	if got := string(AppendDecision(nil, d, nil)); got != want {
		t.Errorf("AppendDecision =\n%s\nwant\n%s", got, want)
	}
	// A gap event without an embedding omits query_embedding.
	g := string(AppendGapEvent(nil, &GapEvent{Kind: "refusal_hard", Query: "q"}))
	if g != `{"kind":"refusal_hard","query":"q","confidence":0,"signals":{},"top_chunks":[]}` {
		t.Errorf("gap event = %s", g)
	}
}

// The decision's keys, in order, are the wire contract (types.go comments,
// docs/decision.md). jsonx keeps members in document order, so read them back.
func TestAppendDecisionKeyOrder(t *testing.T) {
	out := AppendDecision(nil, fullDecision(), nil)
	if !json.Valid(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	v, err := jsonx.Parse(out, 8)
	if err != nil {
		t.Fatal(err)
	}
	keys := func(v *jsonx.Value) string {
		var ks []string
		for i := 0; i < v.Len(); i++ {
			ks = append(ks, v.Key(i))
		}
		return strings.Join(ks, " ")
	}
	checks := []struct{ got, want string }{
		{keys(&v), "action level confidence band interpretation flag_for_review query_type signals rag_confidence chunks prompt caveat refusal missing_aspects confidence_factors recommendations warnings gap_event policy"},
		{keys(v.Get("warnings").Index(0)), "code message"},
		{keys(v.Get("rag_confidence")), "overall_confidence top_score score_gap score_spread consensus_count bm25_dense_agreement reranker_impact graph_support document_diversity interpretation should_flag_for_review"},
		{keys(v.Get("chunks").Index(0)), "id doc_id tag kept reason score quality vector bm25 fused"},
		{keys(v.Get("chunks").Index(1)), "id doc_id tag kept reason score"},
		{keys(v.Get("prompt")), "instructions sources minimal"},
		{keys(v.Get("gap_event")), "kind query query_embedding confidence signals top_chunks"},
		{keys(v.Get("gap_event").Get("top_chunks").Index(0)), "id doc_id score"},
		{keys(v.Get("policy")), "name version sha256"},
		{keys(v.Get("signals")), "max_similarity coverage"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("keys %q, want %q", c.got, c.want)
		}
	}
}

func TestAppendValidation(t *testing.T) {
	tests := []struct {
		v    Validation
		want string
	}{
		{Validation{}, `{"soft_refusal":false,"cited":[],"unknown":[],"uncited_sentences":[],"gap_event":null}`},
		{Validation{SoftRefusal: true, Cited: []string{"S2", "S1"}, Unknown: []string{"S9"}, UncitedSentences: []string{"Water is <wet>."},
			GapEvent: &GapEvent{Kind: "refusal_soft", Query: "why?"}},
			`{"soft_refusal":true,"cited":["S2","S1"],"unknown":["S9"],"uncited_sentences":["Water is \u003cwet\u003e."],` +
				`"gap_event":{"kind":"refusal_soft","query":"why?","confidence":0,"signals":{},"top_chunks":[]}}`},
	}
	for _, tc := range tests {
		if got := string(AppendValidation(nil, &tc.v)); got != tc.want {
			t.Errorf("AppendValidation =\n%s\nwant\n%s", got, tc.want)
		}
	}
}

// TestChunkOutcomeMatchesRef: the whole-object chunk writer and its
// key-by-key fallback give the reference's bytes for every mix of plain and
// escaped strings and of numbers inside and outside its range, with and
// without a comma, from a full buffer and one with room.
func TestChunkOutcomeMatchesRef(t *testing.T) {
	strs := []string{"", "c1", "S12", "kept", "low_score", `a"b`, "x<y", "caf\u00e9", "\x01", "\xff", strings.Repeat("long-id-", 40)}
	nums := []float64{0, 0.5, -0.25, 1.0000005, 1 << 33, -(1 << 33), 1e21, math.NaN(), math.Inf(1), 8589934591.999999}
	n := 0
	for i, id := range strs {
		for j, num := range nums {
			n++
			c := ChunkOutcome{ID: id, DocID: strs[(i+j)%len(strs)], Tag: strs[(i+2*j)%len(strs)], Kept: n%2 == 0,
				Reason: strs[(i*j)%len(strs)], Score: num, Quality: nums[(j+1)%len(nums)], HasQuality: n%3 == 0,
				Vector: nums[(j+2)%len(nums)], HasVector: n%2 == 1, BM25: nums[(j+3)%len(nums)], HasBM25: n%5 != 0,
				Fused: nums[(j+4)%len(nums)], HasFused: n%7 == 0}
			checkChunkOutcome(t, &c)
			c.ID, c.DocID, c.Tag, c.Reason = "c7", "doc-7", "S3", "kept"
			checkChunkOutcome(t, &c)
		}
	}
}

func checkChunkOutcome(t *testing.T, c *ChunkOutcome) {
	t.Helper()
	for _, comma := range []bool{false, true} {
		want := []byte("p:")
		if comma {
			want = append(want, ',')
		}
		want = appendChunkOutcomeRef(want, c)
		for _, dst := range [][]byte{[]byte("p:"), append(make([]byte, 0, 1024), "p:"...)} {
			if got := appendChunkOutcome(dst, comma, c); string(got) != string(want) {
				t.Fatalf("%+v comma %v:\n%s\nreference\n%s", c, comma, got, want)
			}
		}
		if got := appendChunkOutcomeKeys([]byte("p:"), comma, c); string(got) != string(want) {
			t.Fatalf("keys %+v comma %v:\n%s\nreference\n%s", c, comma, got, want)
		}
	}
}
