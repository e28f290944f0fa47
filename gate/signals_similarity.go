package gate

// Max similarity (the confidence-gating document): the gate looks at the best
// cosine similarity over all results. A chunk without a vector score counts
// 0.0, as the original did; the signal is reported only when at least one
// chunk has a vector score, so a request without any (a BM25-only retriever)
// does not pretend to have measured it.
func (e *Engine) signalSimilarity() {
	w := e.work
	best, any := 0.0, false
	for i := range w {
		if w[i].hasVector {
			any = true
			best = maxf(best, w[i].vector)
		}
	}
	if any {
		e.addSignal(SigMaxSimilarity, best)
	}
}
