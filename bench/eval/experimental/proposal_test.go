package experimental

import (
	"math"
	"testing"

	"github.com/ctxgate/ctxgate/bench/eval"
)

// TestProposalWeights refits the proposed signals on the tune halves and
// checks the constants in proposal.go are what the data gives, and that the
// held-out AUROCs are the ones PROPOSAL.md reports.
func TestProposalWeights(t *testing.T) {
	d, clap := load(t)
	check := func(name string, got, want []float64) {
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-3 {
				t.Errorf("%s weight %d: refit %.4f, proposal.go has %.4f", name, i, got[i], want[i])
			}
		}
	}
	ct := clapTable(d, clap).subset("text_coverage", "sqrt_tokens")
	m, at, ah := ct.fit()
	w, b := m.Raw()
	check("answer_coverage", append(w, b), []float64{LexCov, LexLen, LexB})
	t.Logf("answer_coverage: ClapNQ AUROC tune %.4f held %.4f", at, ah)
	if ah < 0.80 {
		t.Errorf("answer_coverage held-out AUROC %.4f < 0.80", ah)
	}
	dt := dl19Table(d, 20).subset("vec_top_gap", "vec_gap", "both_present")
	m, at, ah = dt.fit()
	w, b = m.Raw()
	check("chunk_relevance", append(w, b), []float64{RelTopGap, RelGap, RelBoth, RelB})
	t.Logf("chunk_relevance: DL19 passage AUROC tune %.4f held %.4f", at, ah)
	base := eval.Baselines(d, clap, 20)
	for _, bl := range base {
		if bl.Signal == "raw vector" && ah <= bl.Held {
			t.Errorf("chunk_relevance held %.4f does not beat raw vector %.4f", ah, bl.Held)
		}
	}
}

// TestProposedMatchesTable checks that Proposed (what quality reports)
// computes the same numbers as the fitted table features.
func TestProposedMatchesTable(t *testing.T) {
	r := &eval.Request{Query: "how long do fleas live", Chunks: []eval.Chunk{
		{ID: "a", Text: "A flea can live up to a year.", Vector: 0.9, HasVector: true, BM25: 12, HasBM25: true},
		{ID: "b", Text: "Dogs like to play.", Vector: 0.8, HasVector: true},
	}}
	conf, score, kept := Proposed(r)
	// chunk a: top gap 0, gap 0.1, both 1; chunk b: top gap 0.1, gap 0, both 0.
	wantA := sig(RelB + RelGap*0.1 + RelBoth)
	wantB := sig(RelB + RelTopGap*0.1)
	if math.Abs(score[0]-wantA) > 1e-9 || math.Abs(score[1]-wantB) > 1e-9 {
		t.Errorf("scores %v, want [%v %v]", score, wantA, wantB)
	}
	if kept[0] != (wantA >= KeepThreshold) || kept[1] != (wantB >= KeepThreshold) {
		t.Errorf("kept %v", kept)
	}
	// Query terms are "long", "fleas", "live": only "live" is in chunk a ("flea" is not "fleas").
	wantConf := sig(LexB + LexCov/3 + LexLen*math.Sqrt(8))
	if math.Abs(conf-wantConf) > 1e-9 {
		t.Errorf("conf %v, want %v", conf, wantConf)
	}
}

// bestThreshold picks, on tune rows, the threshold on score (among 0.05 ..
// 0.95 in steps of 0.05) that maximises obj(PR).
func bestThreshold(scores []float64, labels []bool, obj func(eval.PR) float64) float64 {
	best, bestT := math.Inf(-1), 0.5
	for i := 1; i < 20; i++ {
		th := float64(i) / 20
		var p eval.PR
		for j, s := range scores {
			p.Add(s >= th, labels[j])
		}
		if v := obj(p); v > best+1e-12 {
			best, bestT = v, th
		}
	}
	return bestT
}

// TestProposalThresholds derives the operating points on the tune halves:
// answer when answer_coverage maximises balanced accuracy (1 - mean of
// NoMIRACL's hallucination and error rates), keep a chunk where
// chunk_relevance maximises F1.
func TestProposalThresholds(t *testing.T) {
	d, clap := load(t)
	var cs []float64
	var cl []bool
	for _, it := range eval.Half(eval.ClapNQItems(clap), true) {
		c, _, _ := Proposed(it.Req)
		cs, cl = append(cs, c), append(cl, it.Answerable)
	}
	at := bestThreshold(cs, cl, func(p eval.PR) float64 { return 1 - (p.HallucinationRate()+p.ErrorRate())/2 })
	var ks []float64
	var kl []bool
	for _, it := range eval.Half(d.DL19Items(20), true) {
		_, s, _ := Proposed(it.Req)
		ks, kl = append(ks, s...), append(kl, it.ChunkRel...)
	}
	kt := bestThreshold(ks, kl, func(p eval.PR) float64 { return p.F1() })
	t.Logf("answer threshold %.2f, keep threshold %.2f", at, kt)
	if at != AnswerThreshold || kt != KeepThreshold {
		t.Errorf("tune gives answer %.2f keep %.2f; proposal.go has %.2f %.2f", at, kt, AnswerThreshold, KeepThreshold)
	}
}
