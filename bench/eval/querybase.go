package eval

import "math"

// QuerySignals are single query-level signals, each a gate could decide by
// alone: the baselines a policy must beat on each query-level set. A signal
// whose inputs a request lacks is absent for it (a set without vector
// scores has no "max raw vector").
var QuerySignals = []string{
	"max query-term coverage",
	"max raw vector",
	"max raw sparse",
	"max raw bm25",
	"share of chunks both retrievers returned",
}

// QuerySignal computes one of QuerySignals for a request; ok is false when
// the request lacks its inputs.
func QuerySignal(name string, r *Request) (v float64, ok bool) {
	switch name {
	case "max query-term coverage":
		var texts []string
		for _, c := range r.Chunks {
			texts = append(texts, ChunkText(c.Title, c.Text))
		}
		return MaxCoverage(r.Query, texts), len(r.Chunks) > 0
	case "share of chunks both retrievers returned":
		lex, sem, both := false, false, 0
		for _, c := range r.Chunks {
			lex = lex || c.HasBM25
			sem = sem || c.HasVector || c.HasSparse
			if c.HasBM25 && (c.HasVector || c.HasSparse) {
				both++
			}
		}
		if !lex || !sem {
			return 0, false
		}
		return float64(both) / float64(len(r.Chunks)), true
	}
	best := math.Inf(-1)
	for _, c := range r.Chunks {
		switch {
		case name == "max raw vector" && c.HasVector:
			best, ok = math.Max(best, c.Vector), true
		case name == "max raw sparse" && c.HasSparse:
			best, ok = math.Max(best, c.Sparse), true
		case name == "max raw bm25" && c.HasBM25:
			best, ok = math.Max(best, c.BM25), true
		}
	}
	return best, ok
}

// QueryBaselines measures every QuerySignal a set's requests carry, on both
// halves, at the query level.
func QueryBaselines(set string, items []Item) []Baseline {
	var out []Baseline
	for _, name := range QuerySignals {
		var xs []Scored
		present := 0
		for _, it := range items {
			v, ok := QuerySignal(name, it.Req)
			if ok {
				present++
			} else {
				// A request without the signal's inputs (no chunk the
				// retriever scored) is what a gate on that signal alone
				// would trust least.
				v = math.Inf(-1)
			}
			xs = append(xs, Scored{v, it.Answerable, it.Tune})
		}
		if 2*present < len(items) {
			continue // absent from most requests: not a signal this set has
		}
		out = append(out, Split(set, "query", name, xs))
	}
	return out
}

// BestByTune is the baseline with the highest tune AUROC: the single signal
// a policy must beat, chosen without reading the held-out half.
func BestByTune(bs []Baseline) *Baseline {
	var best *Baseline
	for i := range bs {
		if best == nil || bs[i].Tune > best.Tune {
			best = &bs[i]
		}
	}
	return best
}
