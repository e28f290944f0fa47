package quality

import (
	"errors"
	"math"
	"testing"

	"github.com/ctxgate/ctxgate/bench/eval"
	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/policies"
)

// The default policy's operating points are derived from the tune halves,
// through the core itself, on a grid of 0.05 .. 0.95 in steps of 0.05:
//   - answer (caveat band's min): the threshold on confidence that maximises
//     balanced accuracy on ClapNQ tune, 1 − (hallucination rate + error
//     rate)/2 (NoMIRACL's rates);
//   - inject (inject band's min): the lowest threshold at or above it where
//     the ClapNQ tune hallucination rate is at most maxInjectHallucination:
//     an answer without a caveat goes to at most one in ten questions the
//     evidence does not answer;
//   - keep (filters.relevance_min): the chunk-score threshold that maximises
//     F1 of the chunk filter on DL19 tune, pooled over requests of 5, 10 and
//     20 chunks (the sizes chunk_relevance was fitted over).
//
// TestDefaultOperatingPoints fails when policies/default.json drifts from
// what the data gives. The held-out halves are never read here.
const maxInjectHallucination = 0.10

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

func TestDefaultOperatingPoints(t *testing.T) {
	d, clap, err := eval.LoadSetsFrom(".")
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
	items := eval.Half(eval.ClapNQItems(clap), true)
	outs, err := Run(e, items)
	if err != nil {
		t.Fatal(err)
	}
	var conf []float64
	var ans []bool
	for i, o := range outs {
		conf, ans = append(conf, o.Confidence), append(ans, items[i].Answerable)
	}
	answerT := argmax(conf, ans, func(p eval.PR) float64 { return 1 - (p.HallucinationRate()+p.ErrorRate())/2 })
	injectT := math.NaN()
	for _, th := range grid() {
		if th >= answerT && prAt(conf, ans, th).HallucinationRate() <= maxInjectHallucination {
			injectT = th
			break
		}
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
	t.Logf("tune gives: inject >= %.2f, caveat >= %.2f, keep chunk_relevance >= %.2f", injectT, answerT, keepT)
	for _, th := range grid() {
		p := prAt(conf, ans, th)
		t.Logf("  ClapNQ tune confidence >= %.2f: answered %.3f, hallucination rate %.3f, error rate %.3f",
			th, p.Coverage(), p.HallucinationRate(), p.ErrorRate())
	}

	p := e.Policy()
	b := p.Bands
	if len(b) != 3 || b[0].Action != gate.ActionInject || b[1].Action != gate.ActionCaveat || b[2].Action != gate.ActionRefuse {
		t.Fatalf("default bands should be inject / caveat / refuse: %+v", b)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(b[0].Min, injectT) || !near(b[1].Min, answerT) {
		t.Errorf("default.json bands inject %.2f caveat %.2f; the tune half gives %.2f %.2f", b[0].Min, b[1].Min, injectT, answerT)
	}
	if !p.Filters.HasRelevanceMin || !near(p.Filters.RelevanceMin, keepT) {
		t.Errorf("default.json relevance_min %.2f; the tune half gives %.2f", p.Filters.RelevanceMin, keepT)
	}
}
