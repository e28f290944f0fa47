package experimental

import (
	"fmt"
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
	// chunk_relevance: the logistic of (v − RelLambda·top) and both, fitted
	// over requests of 5, 10 and 20 chunks, unfolded into the policy's knobs.
	lam := fmt.Sprintf("lam%02.0f", RelLambda*100)
	mt := buildMixTable(d).subset(lam, "both")
	m, _, _ = mt.fit()
	w, b = m.Raw()
	check("chunk_relevance", []float64{w[0] * (1 - RelLambda), -w[0] * RelLambda, w[1], b},
		[]float64{RelVec, RelTopGap, RelBoth, RelB})
	// Scored through RelevanceScores (what quality's Proposed uses), per k.
	for _, k := range mixKs {
		var s, raw []float64
		var l []bool
		for _, it := range eval.Half(d.DL19Items(k), false) {
			var ps []Passage
			for _, c := range it.Req.Chunks {
				ps = append(ps, Passage{Vector: c.Vector, BM25: c.BM25, HasVec: c.HasVector, HasBM: c.HasBM25})
				v := 0.0
				if c.HasVector {
					v = c.Vector
				}
				raw = append(raw, v)
			}
			s, l = append(s, RelevanceScores(ps)...), append(l, it.ChunkRel...)
		}
		ah, rh := eval.AUROC(s, l), eval.AUROC(raw, l)
		t.Logf("chunk_relevance: DL19 passage AUROC held out, k = %d: %.4f (raw ada-002 %.4f)", k, ah, rh)
		if k == 20 && ah <= rh {
			t.Errorf("chunk_relevance held %.4f does not beat raw vector %.4f at k = 20", ah, rh)
		}
	}
}

// TestProposedMatchesTable checks that Proposed (what quality reports)
// computes the same numbers as the fitted table features.
func TestProposedMatchesTable(t *testing.T) {
	r := &eval.Request{Query: "how long do fleas live", Chunks: []eval.Chunk{
		{ID: "a", Text: "A flea can live up to a year.", Vector: 0.9, HasVector: true, BM25: 12, HasBM25: true},
		{ID: "b", Text: "Dogs like to play.", Vector: 0.8, HasVector: true},
		{ID: "c", Text: "Cats sleep.", BM25: 3, HasBM25: true},
	}}
	conf, score, kept := Proposed(r)
	// a: top, both retrievers; b: 0.1 below the top, vector only; c: no
	// vector score, so RelMissingGap below the top.
	want := []float64{sig(RelB + RelVec*0.9 + RelBoth), sig(RelB + RelVec*0.8 + RelTopGap*0.1),
		sig(RelB + RelVec*(0.9-RelMissingGap) + RelTopGap*RelMissingGap)}
	for i := range want {
		if math.Abs(score[i]-want[i]) > 1e-9 || kept[i] != (want[i] >= KeepThreshold) {
			t.Errorf("chunk %d: score %v kept %v, want %v", i, score[i], kept[i], want[i])
		}
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
// chunk_relevance maximises F1 over tune requests of 5, 10 and 20 chunks.
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
	for _, k := range mixKs { // pooled over request sizes, as the weights were fitted
		for _, it := range eval.Half(d.DL19Items(k), true) {
			_, s, _ := Proposed(it.Req)
			ks, kl = append(ks, s...), append(kl, it.ChunkRel...)
		}
	}
	kt := bestThreshold(ks, kl, func(p eval.PR) float64 { return p.F1() })
	t.Logf("answer threshold %.2f, keep threshold %.2f", at, kt)
	if at != AnswerThreshold || kt != KeepThreshold {
		t.Errorf("tune gives answer %.2f keep %.2f; proposal.go has %.2f %.2f", at, kt, AnswerThreshold, KeepThreshold)
	}
}
