package gate

// Section quality (the retrieval-enhancements document). A section under the
// stub cutoff scores 0; else a length score saturating at 200 words plus a
// keyword score for the share of the question's keywords (stop words removed)
// found in the section. Words are our tokens (see tokenize.go), not the
// original's whitespace split, so "photosynthesis?" matches "photosynthesis"
// (an accident fixed).
func sectionQuality(words, matched, keywords, stub int) float64 {
	if words < stub {
		return 0
	}
	length := minf(0.8, 0.2+float64(words)/200*0.6)
	kw := 0.0
	if keywords > 0 {
		kw = minf(0.2, float64(matched)/float64(keywords)*0.2)
	}
	return snap(minf(1, length+kw))
}

// signalQuality scores every chunk, applies the quality filter with its
// global fallback (if every chunk is below the threshold, all are kept and
// each says so), and reports the share kept and the best score.
func (e *Engine) signalQuality() {
	p := e.policy
	w := e.work
	best := 0.0
	for i := range w {
		w[i].quality = sectionQuality(w[i].words, w[i].qualityHits, e.q.nQuality, p.Quality.StubWords)
		best = maxf(best, w[i].quality)
	}
	kept := len(w)
	if p.Filters.HasQualityMin && len(w) > 0 {
		kept = 0
		for i := range w {
			if w[i].quality >= p.Filters.QualityMin {
				kept++
			}
		}
		if kept == 0 {
			for i := range w {
				w[i].reason = ReasonQualityFallback
			}
		} else {
			for i := range w {
				if w[i].quality < p.Filters.QualityMin {
					w[i].kept = false
					w[i].reason = ReasonQualityLow
				}
			}
		}
	}
	if len(w) > 0 {
		if kept == 0 {
			kept = len(w)
		}
		e.addSignal(SigQualityKept, float64(kept)/float64(len(w)))
		e.addSignal(SigQualityMax, best)
	}
}
