package gate

import (
	"strconv"
)

// signals.sufficiency: sufficient context (the sufficient-context
// document). sufficiency = 0.4·coverage + 0.3·relevance (or the constant
// 0.15 without embeddings) + 0.2·density + 0.1·count, as the document's
// code block computes it. Two accidents are fixed: a query term matches a
// whole token, not a substring ("art" no longer matches "start"), and
// missing terms are listed in query order rather than random set order.
// The query's coverage terms (>= min_term_runes runes or CJK, not on
// coverageStopWords) and each chunk's share of them are found by the
// engine's scan (Engine.prepare: chunkWork.coverage).

// The signals of sufficient context.
const (
	SigCoverage     = "coverage"            // the share of the query's terms found in the chunks
	SigCoverageBest = "coverage_best_chunk" // the best single chunk's share
	SigRelevance    = "relevance"           // the best cosine of the caller's embeddings
	SigDensity      = "density"
	SigContextCount = "context_count"
	SigSufficiency  = "sufficiency"
)

var sufficiencyGroup = signalGroup{
	key:     "sufficiency",
	reports: []string{SigCoverage, SigCoverageBest, SigRelevance, SigDensity, SigContextCount, SigSufficiency},
	on:      func(p *Policy) bool { return p.Sufficiency != nil },
	read:    readSufficiency,
	check: func(p *Policy) *Error {
		s := p.Sufficiency
		if s.MinContexts < 1 || s.MinContexts > 1000 {
			return policyErr("signals.sufficiency.min_contexts", "must be in [1,1000]")
		}
		if !finite(s.DefaultTemperature) || s.DefaultTemperature < 0 {
			return policyErr("signals.sufficiency.default_temperature", "must be a finite number >= 0")
		}
		if s.MinTermRunes < 1 || s.MinTermRunes > 100 {
			return policyErr("signals.sufficiency.min_term_runes", "must be in [1,100]")
		}
		return nil
	},
	state: func() groupState { return sufficiencyState{} },
}

// SufficiencyConfig is the sufficient-context checker.
type SufficiencyConfig struct {
	MinContexts        int     // min_contexts (1; the sufficient-context gateway passes 2)
	DefaultTemperature float64 // default_temperature (37)
	MinTermRunes       int     // min_term_runes: query terms shorter than this are ignored (3)
}

func defaultSufficiency() SufficiencyConfig {
	return SufficiencyConfig{MinContexts: 1, DefaultTemperature: 37, MinTermRunes: 3}
}

func readSufficiency(p *Policy, o obj) *Error {
	if err := o.Strict("min_contexts default_temperature min_term_runes"); err != nil {
		return err
	}
	c := defaultSufficiency()
	if err := readInt(o, "min_contexts", &c.MinContexts); err != nil {
		return err
	}
	if err := readNum(o, "default_temperature", &c.DefaultTemperature); err != nil {
		return err
	}
	if err := readInt(o, "min_term_runes", &c.MinTermRunes); err != nil {
		return err
	}
	p.Sufficiency = &c
	return nil
}

// sufficiencyState keeps nothing between decisions.
type sufficiencyState struct{}

func (sufficiencyState) run(e *Engine, req *Request) {
	cfg := e.policy.Sufficiency
	w := e.work
	n := len(w)
	if n == 0 {
		e.a.missingAspect("No relevant context found")
		return
	}
	// 1. Coverage over all chunks, and the best single chunk's coverage.
	coverage := 1.0
	best := 0.0
	if e.q.nCoverage > 0 {
		found := 0
		for t := range e.q.terms {
			if e.q.terms[t].inCoverage && e.q.found[t] {
				found++
			}
		}
		coverage = float64(found) / float64(e.q.nCoverage)
		listed := 0
		for t := range e.q.terms {
			qt := &e.q.terms[t]
			if qt.inCoverage && !e.q.found[t] && listed < 3 {
				b := append(e.msg(), "Query term '"...)
				b = append(b, e.qtok.text[qt.name0:qt.name1]...)
				e.a.missingAspect(e.done(append(b, "' not found in context"...)))
				listed++
			}
		}
	}
	for i := range w {
		best = maxf(best, w[i].coverage)
	}
	final := float64(coverage * 0.4)
	if coverage > 0.7 {
		b := appendPercent(append(e.msg(), "Good keyword coverage ("...), coverage)
		e.a.factor(e.done(append(b, ')')))
	}
	// 2. Semantic relevance: max cosine of the caller's embeddings.
	relevance, hasRel := 0.0, false
	if len(req.QueryEmbedding) > 0 {
		for i := range w {
			emb := w[i].c.Embedding
			if len(emb) == len(req.QueryEmbedding) {
				c := clamp01(cosine(req.QueryEmbedding, emb))
				if !hasRel || c > relevance {
					relevance = c
				}
				hasRel = true
			}
		}
	}
	if hasRel {
		final += float64(relevance * 0.3)
		if relevance > 0.7 {
			b := appendPercent(append(e.msg(), "High semantic relevance ("...), relevance)
			e.a.factor(e.done(append(b, ')')))
		}
	} else {
		final += 0.15
	}
	// 3. Information density: content length (in characters, as Python's
	// len counts them) and average "temperature".
	chars, temp := 0, 0.0
	for i := range w {
		chars += w[i].chars
		if w[i].c.HasTemperature {
			temp += w[i].c.Temperature
		} else {
			temp += cfg.DefaultTemperature
		}
	}
	avgTemp := temp / float64(n)
	density := (minf(float64(chars)/1000, 1) + minf(avgTemp/50, 1)) / 2
	final += float64(density * 0.2)
	if density < 0.5 {
		e.a.missingAspect("Retrieved context lacks detailed information")
	}
	// 4. Context count.
	count := minf(float64(n)/float64(cfg.MinContexts), 1)
	final += float64(count * 0.1)
	if count < 1 {
		b := append(e.msg(), "Only "...)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, " context(s), need "...)
		e.a.missingAspect(e.done(strconv.AppendInt(b, int64(cfg.MinContexts), 10)))
	}
	e.addSignal(SigCoverage, coverage)
	e.addSignal(SigCoverageBest, best)
	if hasRel {
		e.addSignal(SigRelevance, relevance)
	}
	e.addSignal(SigDensity, clamp01(density))
	e.addSignal(SigContextCount, count)
	e.addSignal(SigSufficiency, clamp01(final))
}
