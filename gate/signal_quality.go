package gate

// signals.quality: section quality (the retrieval-enhancements document). A
// section under the stub cutoff scores 0; else a length score saturating at
// 200 words plus a keyword score for the share of the question's keywords
// (stop words removed, qualityStopWords) found in the section. Words are
// the tokenizer's tokens (tokenize.go), not the original's whitespace
// split, so "photosynthesis?" matches "photosynthesis" (an accident
// fixed). The quality filter (filters.quality_min) drops sections below
// it, with a global fallback: if every section is below, all are kept and
// each says so.

// The signals of section quality.
const (
	SigQualityKept = "quality_kept" // the share of chunks the quality filter keeps
	SigQualityMax  = "quality_max"  // the best section quality
)

// OrderQuality orders chunks by section quality.
const OrderQuality = "quality"

var qualityGroup = signalGroup{
	key:     "quality",
	reports: []string{SigQualityKept, SigQualityMax},
	order:   OrderQuality,
	on:      func(p *Policy) bool { return p.Quality != nil },
	read:    readQuality,
	check: func(p *Policy) *Error {
		if q := p.Quality; q.StubWords < 0 || q.StubWords > 100000 {
			return policyErr("signals.quality.stub_words", "must be in [0,100000]")
		}
		return nil
	},
	state: func() groupState { return &qualityState{} },
}

// QualityConfig is the section-quality score.
type QualityConfig struct {
	StubWords int // stub_words: below this many words the score is 0 (20)
}

func defaultQuality() QualityConfig { return QualityConfig{StubWords: 20} }

func readQuality(p *Policy, o obj) *Error {
	if err := o.Strict("stub_words"); err != nil {
		return err
	}
	q := defaultQuality()
	if err := readInt(o, "stub_words", &q.StubWords); err != nil {
		return err
	}
	p.Quality = &q
	return nil
}

// qualityState holds each chunk's section quality.
type qualityState struct{ score []float64 }

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

// run scores every chunk, applies the quality filter with its global
// fallback (if every chunk is below the threshold, all are kept and each
// says so), and reports the share kept and the best score.
func (s *qualityState) run(e *Engine, _ *Request) {
	p := e.policy
	w := e.work
	s.score = resizeFloat(s.score, len(w))
	best := 0.0
	for i := range w {
		s.score[i] = sectionQuality(w[i].words, w[i].qualityHits, e.q.nQuality, p.Quality.StubWords)
		best = maxf(best, s.score[i])
	}
	kept := len(w)
	if p.Filters.HasQualityMin && len(w) > 0 {
		kept = 0
		for i := range w {
			if s.score[i] >= p.Filters.QualityMin {
				kept++
			}
		}
		if kept == 0 {
			for i := range w {
				w[i].reason = ReasonQualityFallback
			}
		} else {
			for i := range w {
				if s.score[i] < p.Filters.QualityMin {
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

func (s *qualityState) scored() bool             { return true }
func (s *qualityState) chunkScore(i int) float64 { return s.score[i] }

// writeOutcome reports the chunk's quality (chunks[].quality).
func (s *qualityState) writeOutcome(o *ChunkOutcome, i int) {
	o.Quality, o.HasQuality = s.score[i], true
}
