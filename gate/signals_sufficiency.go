package gate

import "strconv"

// Sufficiency (the sufficient-context document) = 0.4·coverage +
// 0.3·relevance (or the constant 0.15 without embeddings) + 0.2·density +
// 0.1·count, as the document's code block computes it. Two accidents are
// fixed: a query term matches a whole token, not a substring ("art" no longer
// matches "start"), and missing terms are listed in query order rather than
// random set order.
func (e *Engine) signalSufficiency(req *Request) {
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
				b = append(b, e.qtext[qt.name0:qt.name1]...)
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
