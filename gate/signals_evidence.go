package gate

import "strconv"

// Evidence (the support-agent article). Reciprocal Rank Fusion fuses the semantic (vector
// scores, or learned-sparse ones in a request without vector scores) and
// BM25 rankings: fused = sum over lists of 1/(k + rank), ranks 1-based, ties in
// input order, a chunk absent from a list getting no term from it. RRF alone
// is rank-only (the best chunk of an irrelevant result set still ranks 1), so
// the score the floors apply to is an absolute blend (docs/policy.md):
//
//	evidence = (wv·vector + wb·bm25/(bm25+s) + wc·coverage + wf·fused/(L/(k+1)))
//	           / (sum of the weights of the components the chunk has)
//	           × freshness × trust
//
// where L is the number of rankings present in the request, so fused/(L/(k+1))
// is 1 for a chunk every ranker puts first (retriever agreement).
func (e *Engine) signalEvidence(req *Request) {
	cfg := e.policy.Evidence
	w := e.work
	n := len(w)
	if n == 0 {
		return
	}
	k := cfg.RRFK
	lists := 0
	for list := 0; list < 2; list++ {
		order := e.order[:n]
		keys := e.keys[:n]
		listed := 0
		for i := range w {
			if list == 0 && w[i].hasSem {
				order[listed], keys[i] = i, w[i].sem
				listed++
			} else if list == 1 && w[i].hasBM25 {
				order[listed], keys[i] = i, w[i].bm25
				listed++
			}
		}
		order = order[:listed]
		if len(order) == 0 {
			continue
		}
		lists++
		sortDesc(order, keys, e.tmp[:len(order)])
		for r, i := range order {
			w[i].fused += rrf(r+1, k)
			w[i].hasFused = true
		}
	}
	norm := float64(lists) / (k + 1)
	bestI := -1
	for i := range w {
		var sum, wsum float64
		if w[i].hasVector {
			sum += float64(cfg.VectorWeight * w[i].vector)
			wsum += cfg.VectorWeight
		}
		if w[i].hasBM25 {
			sum += float64(cfg.BM25Weight * w[i].bm25Sat)
			wsum += cfg.BM25Weight
		}
		sum += float64(cfg.CoverageWeight * w[i].coverage)
		wsum += cfg.CoverageWeight
		if lists > 0 {
			w[i].fusedNorm = clamp01(w[i].fused / norm)
			sum += float64(cfg.FusedWeight * w[i].fusedNorm)
			wsum += cfg.FusedWeight
		}
		ev := 0.0
		if wsum > 0 {
			ev = sum / wsum
		}
		c := w[i].c
		if cfg.Decay != "" && req.HasNow && c.HasUpdated {
			w[i].fresh = freshness(cfg, req.NowSec, c.UpdatedSec)
			w[i].hasFresh = true
			ev = float64(ev * w[i].fresh)
		}
		w[i].trust = cfg.DefaultTrust
		if c.HasTrust {
			w[i].trust = clamp01(c.Trust)
		}
		ev = clamp01(snap(float64(ev * w[i].trust)))
		w[i].evidence = ev
		if bestI < 0 || ev > w[bestI].evidence {
			bestI = i
		}
	}
	if lists > 0 {
		top := 0.0
		for i := range w {
			top = maxf(top, w[i].fusedNorm)
		}
		e.addSignal(SigFusedTop, top)
	}
	best := w[bestI].evidence
	e.addSignal(SigEvidenceTop, best)
	if w[bestI].hasFresh {
		e.addSignal(SigFreshness, w[bestI].fresh)
	}
	if w[bestI].c.HasTrust {
		e.addSignal(SigTrust, w[bestI].trust)
	}
	if best < cfg.LowConfidence {
		e.lowConf = true
		b := append(e.msg(), "Best evidence "...)
		b = strconv.AppendFloat(b, best, 'f', 2, 64)
		b = append(b, " is below the low-confidence score "...)
		b = strconv.AppendFloat(b, cfg.LowConfidence, 'f', 2, 64)
		e.a.recommend(e.done(append(b, ": the answer is flagged for review; add or improve content that answers this question."...)))
	}
	if e.policy.Filters.HasEvidenceFloor {
		floor := e.policy.Filters.EvidenceFloor
		for i := range w {
			if w[i].kept && w[i].evidence < floor {
				w[i].kept = false
				w[i].reason = ReasonEvidenceLow
			}
		}
	}
}

// rrf is the reciprocal rank: 1/(k + rank), rank 1-based.
func rrf(rank int, k float64) float64 { return 1.0 / (k + float64(rank)) }

// freshness decays with age in days: half-life 2^(-age/h), or linear
// 1 - age/d floored at 0. A date in the future counts as age 0.
func freshness(cfg *EvidenceConfig, now, updated int64) float64 {
	age := float64(now-updated) / 86400
	if age <= 0 {
		return 1
	}
	if cfg.Decay == "linear" {
		return clamp01(1 - age/cfg.DecayDays)
	}
	return clamp01(pow2(-age / cfg.DecayDays))
}
