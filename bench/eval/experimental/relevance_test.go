package experimental

import (
	"errors"
	"math"
	"testing"

	"github.com/ctxgate/ctxgate/bench/eval"
	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/internal/logistic"
	"github.com/ctxgate/ctxgate/policies"
)

// relativeRows are chunk_relevance's relative inputs for every passage of
// DL19's BM25 + TAS-B requests of 5, 10 and 20 chunks, one half: how far
// the chunk's dot product sits below the request's best, over the
// request's range (1 when TAS-B did not return it), and whether both
// retrievers returned it; labelled graded >= 2.
func relativeRows(t testing.TB, tune bool) (x [][]float64, y []bool) {
	dir, err := eval.DataDirFrom(".")
	if errors.Is(err, eval.ErrNoData) {
		t.Skip("skipping: ../shared/data is absent")
	}
	if err != nil {
		t.Fatal(err)
	}
	d, err := eval.LoadTREC(dir, "dl19")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range eval.RemovedK {
		for _, it := range d.PairItems(k, eval.TASB) {
			if it.Tune != tune {
				continue
			}
			top, bottom, any := 0.0, 0.0, false
			for _, c := range it.Req.Chunks {
				if c.HasVector {
					if !any || c.Vector > top {
						top = c.Vector
					}
					if !any || c.Vector < bottom {
						bottom = c.Vector
					}
					any = true
				}
			}
			for j, c := range it.Req.Chunks {
				below, both := 1.0, 0.0
				if c.HasVector {
					below = 0
					if top > bottom {
						below = (top - c.Vector) / (top - bottom)
					}
					if c.HasBM25 {
						both = 1
					}
				}
				x, y = append(x, []float64{below, both}), append(y, it.ChunkRel[j])
			}
		}
	}
	return x, y
}

// TestRelativeChunkRelevance refits chunk_relevance's relative model (the
// one for vector scores without a cosine level) on DL19's tune half and
// fails when policies/default.json drifts from what the data gives.
func TestRelativeChunkRelevance(t *testing.T) {
	x, y := relativeRows(t, true)
	m, err := logistic.Fit(x, y, nil, AnswerL2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf(`fitted: "relative": {"bias": %.4f, "below_top": %.4f, "both": %.4f}`, m.B, m.W[0], m.W[1])
	e, err := gate.NewEngine(policies.Default())
	if err != nil {
		t.Fatal(err)
	}
	cr := e.Policy().ChunkRelevance
	if cr == nil {
		t.Fatal("policies/default.json has no signals.chunk_relevance")
	}
	r4 := func(v float64) float64 { return math.Round(v*1e4) / 1e4 }
	if r4(cr.Relative.Bias) != r4(m.B) || r4(cr.Relative.BelowTop) != r4(m.W[0]) || r4(cr.Relative.Both) != r4(m.W[1]) {
		t.Errorf("default.json relative %+v; the tune half gives bias %.4f below_top %.4f both %.4f", cr.Relative, m.B, m.W[0], m.W[1])
	}
	hx, hy := relativeRows(t, false)
	s := make([]float64, len(hx))
	for i := range hx {
		s[i] = m.Logit(hx[i])
	}
	t.Logf("held-out passage AUROC %.3f (pooled over queries; within a request it orders as the dot product does, bar the both term)", eval.AUROC(s, hy))
}
