package quality

import (
	"errors"
	"math"
	"testing"

	"github.com/ctxgate/ctxgate/bench/eval"
	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/policies"
)

// The default policy's chunk filter is derived from the tune halves,
// through the core itself, on a grid of 0.05 .. 0.95 in steps of 0.05:
// keep (filters.relevance_min) is the chunk-score threshold that maximises
// F1 of the chunk filter on DL19 tune, pooled over requests of 5, 10 and 20
// chunks (the sizes chunk_relevance was fitted over). The bands come from
// the answerability models' operating point
// (bench/eval/experimental/answerability_test.go).
//
// TestDefaultChunkFilter fails when policies/default.json drifts from what
// the data gives. The held-out halves are never read here.

func grid() []float64 {
	var g []float64
	for i := 1; i < 20; i++ {
		g = append(g, float64(i)/20)
	}
	return g
}

func prAt(scores []float64, labels []bool, th float64) eval.PR {
	var p eval.PR
	for i, s := range scores {
		p.Add(s >= th, labels[i])
	}
	return p
}

// argmax returns the grid threshold maximising obj (the lowest on ties).
func argmax(scores []float64, labels []bool, obj func(eval.PR) float64) float64 {
	best, bestT := math.Inf(-1), 0.0
	for _, th := range grid() {
		if v := obj(prAt(scores, labels, th)); v > best+1e-12 {
			best, bestT = v, th
		}
	}
	return bestT
}

func TestDefaultChunkFilter(t *testing.T) {
	d, _, err := eval.LoadSetsFrom(".")
	if errors.Is(err, eval.ErrNoData) {
		t.Skip("skipping: ../shared/data is absent")
	}
	if err != nil {
		t.Fatal(err)
	}
	e, err := gate.NewEngine(policies.Default())
	if err != nil {
		t.Fatal(err)
	}
	var cs []float64
	var cl []bool
	for _, k := range append(append([]int{}, SmallK...), K) {
		ditems := eval.Half(d.DL19Items(k), true)
		douts, err := Run(e, ditems)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range douts {
			cs, cl = append(cs, o.ChunkScore...), append(cl, ditems[i].ChunkRel...)
		}
	}
	keepT := argmax(cs, cl, func(p eval.PR) float64 { return p.F1() })
	t.Logf("tune gives: keep chunk_relevance >= %.2f", keepT)
	p := e.Policy()
	if !p.Filters.HasRelevanceMin || math.Abs(p.Filters.RelevanceMin-keepT) > 1e-9 {
		t.Errorf("default.json relevance_min %.2f; the tune half gives %.2f", p.Filters.RelevanceMin, keepT)
	}
}
