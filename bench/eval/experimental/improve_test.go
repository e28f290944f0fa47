package experimental

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/bench/eval"
)

// Candidates for a better chunk_relevance (issue 9: DL19 passage AUROC
// >= 0.75 held out from BM25 and ada-002 alone). Each candidate is chosen by
// leave-one-query-out cross-validation inside the tune half; its held-out
// AUROC is read once, for the report. A model fitted at k = 20 is also scored
// on requests of 5 and 10 chunks (held out), because hosts rarely send 20:
// a feature whose meaning moves with k (the gap to the request's lowest
// score) can rank well at 20 and badly at 5.

var improveNames = []string{"vec_top_gap", "vec_gap", "both_present", "rr_vec", "rr_bm25", "vec_next_gap",
	"vec_ratio", "has_vec", "has_bm25", "rank_bm25_in", "bm25_top_gap_rel", "vector"}

func improveTable(d *eval.DL19, k int) *table {
	tb := &table{names: improveNames}
	for _, it := range d.DL19Items(k) {
		var ps []Passage
		for _, c := range it.Req.Chunks {
			ps = append(ps, Passage{Text: c.Text, Vector: c.Vector, BM25: c.BM25, HasVec: c.HasVector, HasBM: c.HasBM25})
		}
		fs := Features(ps)
		top := 0.0
		for _, f := range fs {
			top = math.Max(top, f.Vector)
		}
		for i, f := range fs {
			rrV, rrB := 0.0, 0.0
			if ps[i].HasVec {
				rrV = 1 / f.RankVec
			}
			if ps[i].HasBM {
				rrB = 1 / f.RankBM25
			}
			// Gap to the next lower vector score in the request (0 for the lowest).
			next := 0.0
			for _, g := range fs {
				if g.Vector < f.Vector && (next == 0 || f.Vector-g.Vector < next) {
					next = f.Vector - g.Vector
				}
			}
			ratio := 0.0
			if top > 0 {
				ratio = f.Vector / top
			}
			hv, hb := 0.0, 0.0
			if ps[i].HasVec {
				hv = 1
			}
			if ps[i].HasBM {
				hb = 1
			}
			tb.rows = append(tb.rows, []float64{f.VecTopGap, f.VecGap, f.BothPresent, rrV, rrB, next,
				ratio, hv, hb, f.RankBM25, 1 - f.BM25Rel, f.Vector})
			tb.y = append(tb.y, it.ChunkRel[i])
			tb.tune = append(tb.tune, it.Tune)
			tb.group = append(tb.group, it.ID)
		}
	}
	return tb
}

// heldAt scores the held-out half of another k's table with a model fitted
// on tb's tune half.
func heldAt(m *Logistic, other *table) float64 {
	x, y := other.half(false)
	s := make([]float64, len(x))
	for i, r := range x {
		s[i] = m.Score(r)
	}
	return eval.AUROC(s, y)
}

// TestImproveChunkRelevance runs only with CTXGATE_EVAL_LONG=1 (leave-one-
// query-out fits for every candidate: tens of seconds of CPU).
func TestImproveChunkRelevance(t *testing.T) {
	if os.Getenv("CTXGATE_EVAL_LONG") == "" {
		t.Skip("set CTXGATE_EVAL_LONG=1 to run the chunk_relevance candidates")
	}
	d, _ := load(t)
	t20, t10, t5 := improveTable(d, 20), improveTable(d, 10), improveTable(d, 5)
	only := os.Getenv("CTXGATE_EVAL_ONLY") != ""
	cands := [][]string{
		{"vec_top_gap", "vec_gap", "both_present"}, // the proposal
		{"vec_top_gap", "both_present"},            // k-independent
		{"vec_top_gap", "vec_gap", "both_present", "rr_vec"},
		{"vec_top_gap", "vec_gap", "both_present", "rr_bm25"},
		{"vec_top_gap", "vec_gap", "both_present", "rr_vec", "rr_bm25"},
		{"vec_top_gap", "both_present", "rr_vec", "rr_bm25"},
		{"vec_top_gap", "vec_gap", "both_present", "vec_next_gap"},
		{"vec_top_gap", "vec_gap", "both_present", "rank_bm25_in"},
		{"vec_top_gap", "vec_gap", "both_present", "bm25_top_gap_rel"},
		{"vec_ratio", "both_present"},
		{"vec_top_gap", "has_vec", "has_bm25"},
		{"vec_top_gap", "both_present", "rr_bm25"},
		// The absolute level back in: pooled over queries, a request whose
		// best chunk is weak should score lower (matters most at small k).
		{"vector", "both_present"},
		{"vector", "vec_top_gap", "both_present"},
		{"vector", "vec_top_gap", "vec_gap", "both_present"},
	}
	if only {
		cands = cands[len(cands)-3:]
	}
	for _, c := range cands {
		sub := t20.subset(c...)
		cv := sub.cv(23)
		m, at, ah := sub.fit()
		w, b := m.Raw()
		t.Logf("%-56s cv-tune %.4f tune %.4f held %.4f | held k=10 %.4f k=5 %.4f | w %v b %.4f",
			strings.Join(c, "+"), cv, at, ah, heldAt(m, t10.subset(c...)), heldAt(m, t5.subset(c...)), round4(w), b)
	}
}
