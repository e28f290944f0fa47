package gate

import (
	"strconv"
)

// signals.evidence: per-chunk evidence (the support-agent article).
// Reciprocal Rank Fusion fuses the semantic (vector scores, or learned-sparse
// ones in a request without vector scores) and BM25 rankings: fused = sum
// over lists of 1/(k + rank), ranks 1-based, ties in input order, a chunk
// absent from a list getting no term from it. RRF alone is rank-only (the
// best chunk of an irrelevant result set still ranks 1), so the score the
// floors apply to is an absolute blend (docs/policy.md):
//
//	evidence = (wv·vector + wb·bm25/(bm25+s) + wc·coverage + wf·fused/(L/(k+1)))
//	           / (sum of the weights of the components the chunk has)
//	           × freshness × trust
//
// where L is the number of rankings present in the request, so fused/(L/(k+1))
// is 1 for a chunk every ranker puts first (retriever agreement). The
// evidence floor (filters.evidence_floor) drops chunks below it; best
// evidence under low_confidence flags the decision for review.

// The signals of evidence.
const (
	SigFusedTop    = "fused_top"    // the best normalised fused score
	SigEvidenceTop = "evidence_top" // the best evidence
	SigFreshness   = "freshness"    // the best chunk's freshness
	SigTrust       = "trust"        // the best chunk's trust
)

// OrderEvidence orders chunks by evidence.
const OrderEvidence = "evidence"

var evidenceGroup = signalGroup{
	key:     "evidence",
	reports: []string{SigFusedTop, SigEvidenceTop, SigFreshness, SigTrust},
	order:   OrderEvidence,
	on:      func(p *Policy) bool { return p.Evidence != nil },
	read:    readEvidence,
	check:   checkEvidence,
	state:   func() groupState { return &evidenceState{} },
}

// EvidenceConfig is the per-chunk evidence score.
type EvidenceConfig struct {
	RRFK          float64 // rrf_k (60)
	LowConfidence float64 // low_confidence: best evidence below this flags (0.5)
	// Weights of the evidence blend; a component absent for a chunk drops
	// out and the others are renormalised (docs/policy.md).
	VectorWeight   float64 // weights.vector (0.4)
	BM25Weight     float64 // weights.bm25 (0.2)
	CoverageWeight float64 // weights.coverage (0.2)
	FusedWeight    float64 // weights.fused (0.2)
	BM25Saturation float64 // bm25_saturation: bm25/(bm25+s) (10)
	DefaultTrust   float64 // default_trust: a chunk without trust (1)
	Decay          string  // freshness.decay: "" (off) | "half_life" | "linear"
	DecayDays      float64 // freshness.days: half-life, or age at which linear decay reaches 0
}

func defaultEvidence() EvidenceConfig {
	return EvidenceConfig{RRFK: 60, LowConfidence: 0.5, VectorWeight: 0.4, BM25Weight: 0.2,
		CoverageWeight: 0.2, FusedWeight: 0.2, BM25Saturation: 10, DefaultTrust: 1}
}

func readEvidence(p *Policy, o obj) *Error {
	if err := o.Strict("rrf_k low_confidence weights bm25_saturation default_trust freshness"); err != nil {
		return err
	}
	c := defaultEvidence()
	for _, f := range [...]struct {
		k string
		v *float64
	}{{"rrf_k", &c.RRFK}, {"low_confidence", &c.LowConfidence},
		{"bm25_saturation", &c.BM25Saturation}, {"default_trust", &c.DefaultTrust}} {
		if err := readNum(o, f.k, f.v); err != nil {
			return err
		}
	}
	if wts, ok, err := o.Object("weights", false); err != nil {
		return err
	} else if ok {
		if err := wts.Strict("vector bm25 coverage fused"); err != nil {
			return err
		}
		// Given weights replace the defaults as a set: an absent one is 0.
		c.VectorWeight, c.BM25Weight, c.CoverageWeight, c.FusedWeight = 0, 0, 0, 0
		for _, f := range [...]struct {
			k string
			v *float64
		}{{"vector", &c.VectorWeight}, {"bm25", &c.BM25Weight}, {"coverage", &c.CoverageWeight}, {"fused", &c.FusedWeight}} {
			if err := readNum(wts, f.k, f.v); err != nil {
				return err
			}
		}
	}
	if fr, ok, err := o.Object("freshness", false); err != nil {
		return err
	} else if ok {
		if err := fr.Strict("decay days"); err != nil {
			return err
		}
		if c.Decay, _, err = fr.Str("decay", true); err != nil {
			return err
		}
		if c.DecayDays, _, err = fr.Num("days", true); err != nil {
			return err
		}
	}
	p.Evidence = &c
	return nil
}

func checkEvidence(p *Policy) *Error {
	e := p.Evidence
	if !finite(e.RRFK) || e.RRFK < 1 {
		return policyErr("signals.evidence.rrf_k", "must be a finite number >= 1 (so a fused score stays in [0,1])")
	}
	if !unit(e.LowConfidence) {
		return policyErr("signals.evidence.low_confidence", "must be in [0,1]")
	}
	ws := [...]struct {
		f string
		v float64
	}{{"vector", e.VectorWeight}, {"bm25", e.BM25Weight}, {"coverage", e.CoverageWeight}, {"fused", e.FusedWeight}}
	sum := 0.0
	for _, w := range ws {
		if !unit(w.v) {
			return policyErr("signals.evidence.weights."+w.f, "must be in [0,1]")
		}
		sum += w.v
	}
	if sum < 1-1e-9 || sum > 1+1e-9 {
		return policyErr("signals.evidence.weights", "must sum to 1, got "+fixed(sum, 6))
	}
	if !finite(e.BM25Saturation) || e.BM25Saturation <= 0 {
		return policyErr("signals.evidence.bm25_saturation", "must be a finite number > 0")
	}
	if !unit(e.DefaultTrust) {
		return policyErr("signals.evidence.default_trust", "must be in [0,1]")
	}
	switch e.Decay {
	case "":
	case "half_life", "linear":
		if !finite(e.DecayDays) || e.DecayDays <= 0 {
			return policyErr("signals.evidence.freshness.days", "must be a finite number > 0")
		}
	default:
		return policyErr("signals.evidence.freshness.decay", "unknown decay "+strconv.Quote(e.Decay)+" (want half_life or linear)")
	}
	return nil
}

// evidenceState holds each chunk's fused score, evidence, freshness and
// trust, and the rankings' sort scratch.
type evidenceState struct {
	fused, fusedNorm, evidence []float64
	fresh, trust               []float64
	hasFused, hasFresh         []bool
	order, tmp                 []int
	keys                       []float64
}

func (s *evidenceState) reset(n int) {
	s.fused, s.fusedNorm, s.evidence = zeroed(s.fused, n), zeroed(s.fusedNorm, n), zeroed(s.evidence, n)
	s.fresh, s.trust = zeroed(s.fresh, n), zeroed(s.trust, n)
	s.hasFused, s.hasFresh = zeroed(s.hasFused, n), zeroed(s.hasFresh, n)
	s.order, s.tmp, s.keys = zeroed(s.order, n), zeroed(s.tmp, n), resizeFloat(s.keys, n)
}

func (s *evidenceState) run(e *Engine, req *Request) {
	cfg := e.policy.Evidence
	w := e.work
	n := len(w)
	s.reset(n)
	if n == 0 {
		return
	}
	k := cfg.RRFK
	lists := 0
	for list := 0; list < 2; list++ {
		order := s.order[:n]
		keys := s.keys[:n]
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
		sortDesc(order, keys, s.tmp[:len(order)])
		for r, i := range order {
			s.fused[i] += rrf(r+1, k)
			s.hasFused[i] = true
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
			s.fusedNorm[i] = clamp01(s.fused[i] / norm)
			sum += float64(cfg.FusedWeight * s.fusedNorm[i])
			wsum += cfg.FusedWeight
		}
		ev := 0.0
		if wsum > 0 {
			ev = sum / wsum
		}
		c := w[i].c
		if cfg.Decay != "" && req.HasNow && c.HasUpdated {
			s.fresh[i] = freshness(cfg, req.NowSec, c.UpdatedSec)
			s.hasFresh[i] = true
			ev = float64(ev * s.fresh[i])
		}
		s.trust[i] = cfg.DefaultTrust
		if c.HasTrust {
			s.trust[i] = clamp01(c.Trust)
		}
		ev = clamp01(snap(float64(ev * s.trust[i])))
		s.evidence[i] = ev
		if bestI < 0 || ev > s.evidence[bestI] {
			bestI = i
		}
	}
	if lists > 0 {
		top := 0.0
		for i := range w {
			top = maxf(top, s.fusedNorm[i])
		}
		e.addSignal(SigFusedTop, top)
	}
	best := s.evidence[bestI]
	e.addSignal(SigEvidenceTop, best)
	if s.hasFresh[bestI] {
		e.addSignal(SigFreshness, s.fresh[bestI])
	}
	if w[bestI].c.HasTrust {
		e.addSignal(SigTrust, s.trust[bestI])
	}
	if best < cfg.LowConfidence {
		e.a.lowConfidence = true
		b := append(e.msg(), "Best evidence "...)
		b = appendFixed(b, best, 2)
		b = append(b, " is below the low-confidence score "...)
		b = appendFixed(b, cfg.LowConfidence, 2)
		e.a.recommend(e.done(append(b, ": the answer is flagged for review; add or improve content that answers this question."...)))
	}
	if e.policy.Filters.HasEvidenceFloor {
		floor := e.policy.Filters.EvidenceFloor
		for i := range w {
			if w[i].kept && s.evidence[i] < floor {
				w[i].kept = false
				w[i].reason = ReasonEvidenceLow
			}
		}
	}
}

func (s *evidenceState) scored() bool             { return true }
func (s *evidenceState) chunkScore(i int) float64 { return s.evidence[i] }

// writeOutcome reports the chunk's raw fused score (chunks[].fused) when a
// ranking placed it.
func (s *evidenceState) writeOutcome(o *ChunkOutcome, i int) {
	if i < len(s.hasFused) && s.hasFused[i] {
		o.Fused, o.HasFused = clamp01(s.fused[i]), true
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
