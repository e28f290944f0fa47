package gate

// signals.similarity: max similarity (the confidence-gating document). The
// gate looks at the best cosine similarity over all results. A chunk
// without a vector score counts 0.0, as the original did; the signal is
// reported only when at least one chunk has a vector score, so a request
// without any (a BM25-only retriever) does not pretend to have measured it.

// SigMaxSimilarity is the best vector score of the request.
const SigMaxSimilarity = "max_similarity"

var similarityGroup = signalGroup{
	key:     "similarity",
	reports: []string{SigMaxSimilarity},
	on:      func(p *Policy) bool { return p.Similarity != nil },
	read: func(p *Policy, o obj) *Error {
		if err := o.Strict(""); err != nil {
			return err
		}
		p.Similarity = &SimilarityConfig{}
		return nil
	},
	state: func() groupState { return similarityState{} },
}

// SimilarityConfig has no parameters: max similarity is the max of
// scores.vector. It exists so a policy can switch it on.
type SimilarityConfig struct{}

type similarityState struct{}

func (similarityState) run(e *Engine, _ *Request) {
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
