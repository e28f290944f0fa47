package gate

// signals.chunk_relevance: the default policy's per-chunk relevance, a
// logistic model fitted on public labeled data (bench/eval/PROPOSAL.md,
// docs/quality.md) whose weights are policy knobs. The relevance filter
// (filters.relevance_min) drops chunks below it.

// SigChunkRelevance is the best chunk's chunk_relevance.
const SigChunkRelevance = "chunk_relevance"

// OrderRelevance orders chunks by chunk_relevance; it applies only to a
// request with a vector score.
const OrderRelevance = "chunk_relevance"

var chunkRelevanceGroup = signalGroup{
	key:     "chunk_relevance",
	reports: []string{SigChunkRelevance},
	order:   OrderRelevance,
	on:      func(p *Policy) bool { return p.ChunkRelevance != nil },
	read:    readChunkRelevance,
	check: func(p *Policy) *Error {
		c := p.ChunkRelevance
		for _, w := range [...]struct {
			f string
			v float64
		}{{"bias", c.Bias}, {"vector", c.Vector}, {"below_top", c.BelowTop}, {"both", c.Both},
			{"relative.bias", c.Relative.Bias}, {"relative.below_top", c.Relative.BelowTop}, {"relative.both", c.Relative.Both}} {
			if !logitWeight(w.v) {
				return policyErr("signals.chunk_relevance."+w.f, "must be a finite number in [-100,100]")
			}
		}
		if !unit(c.MissingGap) {
			return policyErr("signals.chunk_relevance.missing_gap", "must be in [0,1]")
		}
		return nil
	},
	state: func() groupState { return &chunkRelevanceState{} },
}

// ChunkRelevanceConfig is the logistic weights of chunk_relevance: a chunk's
// raw vector score, its distance below the request's best, and retriever
// agreement: sigmoid(Bias + Vector·v + BelowTop·(top−v) + Both·both), where
// a chunk without a vector score takes v = top − MissingGap. No term
// depends on how many chunks a request carries, so the weights hold for 5
// chunks as for 20. The defaults are fitted on DL19's tuning half over
// requests of 5, 10 and 20 chunks (bench/eval/PROPOSAL.md).
type ChunkRelevanceConfig struct {
	Bias       float64 // bias (-9.7964)
	Vector     float64 // vector: weight of the raw vector score v (11.2182)
	BelowTop   float64 // below_top: weight of (top − v) (-44.8727)
	Both       float64 // both: weight of "chunk has both a vector and a bm25 score" (1.3228)
	MissingGap float64 // missing_gap: a chunk without a vector score sits this far below top (0.05)
	// Relative (relative) scores requests whose vector scores have no
	// cosine level (a dot product, l2 between embeddings not of unit
	// length): the weights above read cosine units.
	Relative RelativeRelevance
}

// RelativeRelevance is chunk_relevance on any scale:
// sigmoid(Bias + BelowTop·(top−s)/(top−bottom) + Both·both), where top and
// bottom are the request's best and worst vector similarity, so that a dot
// product of 105 below a best of 108 in a list down to 95 sits where a
// cosine would sit in the same place of its list; a chunk without a vector
// score sits at the bottom (1). The defaults are fitted on DL19's tuning
// half with TAS-B dot products, requests of 5, 10 and 20 chunks
// (bench/eval/experimental).
type RelativeRelevance struct {
	Bias, BelowTop, Both float64
}

func defaultChunkRelevance() ChunkRelevanceConfig {
	return ChunkRelevanceConfig{Bias: -9.7964, Vector: 11.2182, BelowTop: -44.8727, Both: 1.3228, MissingGap: 0.05,
		Relative: RelativeRelevance{Bias: 0.2988, BelowTop: -3.0496, Both: 1.3284}}
}

func readChunkRelevance(p *Policy, o obj) *Error {
	// above_low (default policy version 2) is gone on purpose: it made
	// the score depend on how many chunks a request carries, and a policy
	// still setting it would mix its old weights with new defaults.
	if v, _ := o.Get("above_low", false); v != nil {
		return o.Fail("above_low", "was removed (it tied the score to the number of chunks); use vector, below_top, both, missing_gap")
	}
	if err := o.Strict("bias vector below_top both missing_gap relative"); err != nil {
		return err
	}
	c := defaultChunkRelevance()
	for _, f := range [...]struct {
		k string
		v *float64
	}{{"bias", &c.Bias}, {"vector", &c.Vector}, {"below_top", &c.BelowTop}, {"both", &c.Both},
		{"missing_gap", &c.MissingGap}} {
		if err := readNum(o, f.k, f.v); err != nil {
			return err
		}
	}
	if r, ok, err := o.Object("relative", false); err != nil {
		return err
	} else if ok {
		if err := r.Strict("bias below_top both"); err != nil {
			return err
		}
		for _, f := range [...]struct {
			k string
			v *float64
		}{{"bias", &c.Relative.Bias}, {"below_top", &c.Relative.BelowTop}, {"both", &c.Relative.Both}} {
			if err := readNum(r, f.k, f.v); err != nil {
				return err
			}
		}
	}
	p.ChunkRelevance = &c
	return nil
}

// chunkRelevanceState holds each chunk's chunk_relevance; any tells
// whether this decision's request had a vector score to compute it from.
type chunkRelevanceState struct {
	relevance []float64
	any       bool
}

// run scores every chunk by its raw vector score, how far it sits below
// the request's best (top), and whether both retrievers returned it:
// sigmoid(bias + vector·v + below_top·(top−v) + both·[vector and bm25]).
// Mostly relative (below_top dominates: raw cosines of one embedding model
// are not comparable across queries) with some absolute level (with few
// chunks, how good the best one is matters too). No term depends on how
// many chunks the request has, unlike the request's lowest score in
// version 2, which made a 5-chunk request rank worse than raw cosine. A
// chunk without a vector score takes v = top − missing_gap: the dense
// retriever did not return it, so it sits below the best by a fixed
// amount, not below the request's worst (which moves with k). Reported
// only when some chunk has a vector score; then the relevance_min filter
// applies to the chunks still kept, with the quality filter's global
// fallback (if it would drop them all, all stay and say so).
func (s *chunkRelevanceState) run(e *Engine, _ *Request) {
	cfg := e.policy.ChunkRelevance
	w := e.work
	s.any = false
	top, any := 0.0, false
	for i := range w {
		if w[i].hasVector && (!any || w[i].vector > top) {
			top, any = w[i].vector, true
		}
	}
	if !any && !s.relative(e, cfg) {
		return
	}
	s.any = true
	best := 0.0
	if any {
		s.relevance = resizeFloat(s.relevance, len(w))
		for i := range w {
			v := top - cfg.MissingGap
			if w[i].hasVector {
				v = w[i].vector
			}
			both := 0.0
			if w[i].hasVector && w[i].hasBM25 {
				both = 1
			}
			x := cfg.Bias + float64(cfg.Vector*v) + float64(cfg.BelowTop*(top-v)) + float64(cfg.Both*both)
			s.relevance[i] = clamp01(snap(sigmoid(x)))
		}
	}
	for i := range w {
		best = maxf(best, s.relevance[i])
	}
	e.addSignal(SigChunkRelevance, best)
	f := &e.policy.Filters
	if !f.HasRelevanceMin {
		return
	}
	after := 0
	for i := range w {
		if w[i].kept && s.relevance[i] >= f.RelevanceMin {
			after++
		}
	}
	for i := range w {
		if !w[i].kept {
			continue
		}
		if after == 0 {
			w[i].reason = ReasonRelevanceFallback
		} else if s.relevance[i] < f.RelevanceMin {
			w[i].kept = false
			w[i].reason = ReasonRelevanceLow
		}
	}
}

func (s *chunkRelevanceState) scored() bool             { return s.any }
func (s *chunkRelevanceState) chunkScore(i int) float64 { return s.relevance[i] }

// relative scores every chunk by the relative model when the request's
// vector scores have no cosine level; false when no chunk has a vector
// score at all.
func (s *chunkRelevanceState) relative(e *Engine, cfg *ChunkRelevanceConfig) bool {
	w := e.work
	top, bottom, any := 0.0, 0.0, false
	for i := range w {
		if !w[i].hasSim {
			continue
		}
		if !any || w[i].sim > top {
			top = w[i].sim
		}
		if !any || w[i].sim < bottom {
			bottom = w[i].sim
		}
		any = true
	}
	if !any {
		return false
	}
	r := &cfg.Relative
	s.relevance = resizeFloat(s.relevance, len(w))
	for i := range w {
		below := 1.0 // no vector score: below every chunk that has one
		if w[i].hasSim {
			below = 0
			if top > bottom {
				below = (top - w[i].sim) / (top - bottom)
			}
		}
		both := 0.0
		if w[i].hasSim && w[i].hasBM25 {
			both = 1
		}
		x := r.Bias + float64(r.BelowTop*below) + float64(r.Both*both)
		s.relevance[i] = clamp01(snap(sigmoid(x)))
	}
	return true
}
