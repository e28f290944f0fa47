package gaps

import (
	"errors"
	"math"
	"sort"
	"strconv"
)

// Failure modes (the support-agent article) and the fix each calls for. The rules are in
// diagnose and in the table in docs/gaps.md; keep the two in step.
const (
	ModeSplitChunk     = "split_chunk"
	ModeOverRefusal    = "over_refusal"
	ModeWrongDocs      = "wrong_docs_retrieved"
	ModeAlmostMatched  = "almost_matched"
	ModeNoRelevantDocs = "no_relevant_docs"
	ModeUnclassified   = "unclassified"
)

// Fix categories.
const (
	FixNewContent      = "new_content"
	FixBetterRetrieval = "better_retrieval"
	FixThreshold       = "threshold_change"
	FixBetterChunking  = "better_chunking"
	FixInspect         = "inspect"
)

var modeFix = map[string]struct{ fix, action string }{
	ModeNoRelevantDocs: {FixNewContent, "Write or ingest a document that answers these questions: nothing in the corpus comes close."},
	ModeWrongDocs:      {FixBetterRetrieval, "Improve retrieval (hybrid BM25 + vector, a reranker, query expansion, metadata filters): retrieval was confident but the chunks it found do not contain the question's terms."},
	ModeAlmostMatched:  {FixThreshold, "Review the evidence floor, or enrich the nearest document: it comes close, by its score or by the question's terms it holds, and falls short."},
	ModeSplitChunk:     {FixBetterChunking, "Re-chunk (larger or overlapping chunks, parent-document retrieval): the retrieved chunks cover the question together but no single chunk does."},
	ModeOverRefusal:    {FixThreshold, "Relax the refusal trigger or review the prompt: the evidence was strong, yet the answer was refused or rejected."},
	ModeUnclassified:   {FixInspect, "Inspect by hand: no event recorded a retrieval score, so the failure cannot be placed."},
}

// Thresholds are the numbers the diagnosis rules compare against.
type Thresholds struct {
	// Floor is the policy's evidence floor (the support-agent article's
	// RETRIEVAL_MIN_SCORE, 0.35).
	Floor float64 `json:"floor"`
	// Near is how far below the floor still counts as "almost" (0.10).
	Near float64 `json:"near"`
	// LowConfidence is the support-agent article's LOW_CONFIDENCE_SCORE (0.5).
	LowConfidence float64 `json:"low_confidence"`
	// CoverageLow: query-term coverage below it means the retrieved text does
	// not talk about the question (0.5).
	CoverageLow float64 `json:"coverage_low"`
	// CoverageHigh: coverage at or above it means the retrieved text does
	// (0.7, sufficiency's confidence-factor line).
	CoverageHigh float64 `json:"coverage_high"`
	// BestChunkLow: the best single chunk's coverage below it means no chunk
	// holds the answer alone (0.5).
	BestChunkLow float64 `json:"best_chunk_low"`
}

// DefaultThresholds follow the support-agent policy.
func DefaultThresholds() Thresholds {
	return Thresholds{Floor: 0.35, Near: 0.10, LowConfidence: 0.5, CoverageLow: 0.5, CoverageHigh: 0.7, BestChunkLow: 0.5}
}

func (t *Thresholds) validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"floor", t.Floor}, {"near", t.Near}, {"low_confidence", t.LowConfidence}, {"coverage_low", t.CoverageLow},
		{"coverage_high", t.CoverageHigh}, {"best_chunk_low", t.BestChunkLow}} {
		if !(f.v >= 0 && f.v <= 1) {
			return errors.New(f.name + " must be in [0, 1], got " + ftoa(f.v))
		}
	}
	if t.CoverageLow > t.CoverageHigh {
		return errors.New("coverage_low must not exceed coverage_high")
	}
	return nil
}

// bestScorePriority is where an event's best retrieval score is read from, first
// present wins: the evidence score the support-agent floor applies to, then the
// confidence gate's max similarity, then the retrieval metrics' top score, then
// the recorded top chunks. They are all on [0,1].
var bestScorePriority = []string{"evidence_top", "max_similarity", "top_score"}

// bestScore returns an event's best retrieval score. A hard refusal with no
// chunks and no score signal retrieved nothing: its best score is 0.
func bestScore(ev *Event) (float64, bool) {
	for _, name := range bestScorePriority {
		if v, ok := ev.Signals[name]; ok {
			return v, true
		}
	}
	if len(ev.TopChunks) > 0 {
		b := ev.TopChunks[0].Score
		for _, c := range ev.TopChunks[1:] {
			if c.Score > b {
				b = c.Score
			}
		}
		return b, true
	}
	if ev.Kind == KindRefusalHard {
		return 0, true
	}
	return 0, false
}

// Median is a signal's median over the events of a cluster that recorded it.
type Median struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Events int     `json:"events"` // how many events recorded it
}

// Diagnosis is a cluster's failure mode and why.
type Diagnosis struct {
	Mode   string `json:"failure_mode"`
	Fix    string `json:"fix"`
	Action string `json:"action"`
	// Title says the failure mode in words ("The knowledge base has nothing
	// on this"), FixTitle the fix in a few words.
	Title    string `json:"title"`
	FixTitle string `json:"fix_title"`
	// Why explains the mode with the two or three signals behind it, in
	// sentences.
	Why []string `json:"why"`
	// Reason states the rule that fired with the cluster's numbers.
	Reason string `json:"reason"`
	// Best is the median best retrieval score (bestScorePriority), nil when
	// no event recorded one.
	Best *float64 `json:"best_score"`
	// Signals are the medians of every signal the events recorded, by name.
	Signals []Median `json:"signals"`
}

func median(v []float64) float64 {
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// signalValues are a cluster's recorded values: every signal by name, and
// every event's best score (bestScore). Build collects them from the
// events; a streamed report from its per-gap samples (sketch.go).
type signalValues struct {
	vals map[string][]float64
	best []float64
}

func (sv *signalValues) addEvent(ev *Event) {
	if sv.vals == nil {
		sv.vals = map[string][]float64{}
	}
	for name, v := range ev.Signals {
		sv.vals[name] = append(sv.vals[name], v)
	}
	if b, ok := bestScore(ev); ok {
		sv.best = append(sv.best, b)
	}
}

// diagnose classifies the events idx of events as one cluster.
func diagnose(events []Event, idx []int32, sc SourceCounts, th *Thresholds) Diagnosis {
	var sv signalValues
	for _, i := range idx {
		sv.addEvent(&events[i])
	}
	return diagnoseValues(&sv, sc, th)
}

// diagnoseValues classifies a cluster by the first rule that matches, in
// this order (most specific first); B is the median best score, C the
// median coverage, F the floor, N near, L the low-confidence line, H and
// Lo the coverage lines:
//
//  1. split_chunk: C >= H and coverage_best_chunk < BestChunkLow.
//  2. over_refusal: B >= L and, when coverage is recorded, C >= H: the
//     evidence was there and the answer was refused, hedged or rejected.
//  3. wrong_docs_retrieved: B >= F and C < Lo.
//  4. almost_matched: F - N <= B < L; or B >= F with Lo <= C < H (on
//     topic, partly covered); or C >= H with B < F - N (the passages hold
//     the question's terms, the scores are what fall short).
//  5. no_relevant_docs: B < F - N and C (when recorded) < H.
//  6. unclassified: no event recorded a retrieval score.
//
// Every recorded score falls under one of 1-5: only a cluster without any
// score asks for a look by hand. All numbers are medians over the cluster's
// events, so one odd event does not flip a cluster of fifty.
func diagnoseValues(sv *signalValues, sc SourceCounts, th *Thresholds) Diagnosis {
	var d Diagnosis
	names := make([]string, 0, len(sv.vals))
	for name := range sv.vals {
		names = append(names, name)
	}
	sort.Strings(names)
	med := map[string]float64{}
	for _, name := range names {
		m := median(sv.vals[name])
		med[name] = m
		d.Signals = append(d.Signals, Median{Name: name, Value: round6(m), Events: len(sv.vals[name])})
	}
	b, hasBest := 0.0, len(sv.best) > 0
	if hasBest {
		b = median(sv.best)
		r := round6(b)
		d.Best = &r
	}
	cov, hasCov := med["coverage"]
	covBest, hasCovBest := med["coverage_best_chunk"]
	total := sc.RefusalHard + sc.RefusalSoft + sc.ThumbsDown + sc.LowConfidence
	share := 0.0
	if total > 0 {
		share = float64(sc.RefusalSoft+sc.ThumbsDown) / float64(total)
	}
	covText := func() string { return "coverage " + f3(cov) }
	switch {
	case hasCov && hasCovBest && cov >= th.CoverageHigh && covBest < th.BestChunkLow:
		d.Mode = ModeSplitChunk
		d.Reason = covText() + " >= " + f3(th.CoverageHigh) + " but best single chunk covers " + f3(covBest) + " < " + f3(th.BestChunkLow)
	case hasBest && b >= th.LowConfidence && (!hasCov || cov >= th.CoverageHigh):
		d.Mode = ModeOverRefusal
		d.Reason = "best score " + f3(b) + " >= " + f3(th.LowConfidence)
		if hasCov {
			d.Reason += " and " + covText() + " >= " + f3(th.CoverageHigh)
		}
		d.Reason += ", yet every event is a refusal, a hedged answer or a thumbs-down (" + strconv.Itoa(int(share*100+0.5)) + "% soft refusals or thumbs-down)"
	case hasBest && hasCov && b >= th.Floor && cov < th.CoverageLow:
		d.Mode = ModeWrongDocs
		d.Reason = "best score " + f3(b) + " >= floor " + f3(th.Floor) + " but " + covText() + " < " + f3(th.CoverageLow)
	case hasBest && b >= th.Floor-th.Near && b < th.LowConfidence:
		d.Mode = ModeAlmostMatched
		d.Reason = "best score " + f3(b) + " is in [floor - near, low confidence) = [" + f3(th.Floor-th.Near) + ", " + f3(th.LowConfidence) + ")"
	case hasBest && hasCov && b >= th.Floor && cov < th.CoverageHigh:
		d.Mode = ModeAlmostMatched
		d.Reason = "best score " + f3(b) + " >= floor " + f3(th.Floor) + " and " + covText() + " in [" + f3(th.CoverageLow) + ", " + f3(th.CoverageHigh) + "): on topic, partly covered"
	case hasBest && hasCov && cov >= th.CoverageHigh:
		d.Mode = ModeAlmostMatched
		d.Reason = covText() + " >= " + f3(th.CoverageHigh) + " but best score " + f3(b) + " < floor - near " + f3(th.Floor-th.Near) + ": the passages hold the terms, the scores fall short"
	case hasBest:
		d.Mode = ModeNoRelevantDocs
		d.Reason = "best score " + f3(b) + " < floor - near " + f3(th.Floor-th.Near)
		if hasCov {
			d.Reason += " and " + covText() + " < " + f3(th.CoverageHigh)
		}
	default:
		d.Mode = ModeUnclassified
		d.Reason = "no event recorded a retrieval score"
	}
	f := modeFix[d.Mode]
	d.Fix, d.Action = f.fix, f.action
	d.Title, d.FixTitle = modeTitles[d.Mode], fixTitles[d.Fix]
	d.Why = why(d.Mode, &facts{best: b, cov: cov, covBest: covBest, hasBest: hasBest, hasCov: hasCov,
		softOrDown: sc.RefusalSoft + sc.ThumbsDown, total: total}, th)
	return d
}

func f3(x float64) string {
	if math.Abs(x) > 1e12 { // out of int64 range after scaling: leave as is
		return ftoa(x)
	}
	return ftoa(float64(int64(x*1000+sign(x)*0.5)) / 1000)
}

func sign(x float64) float64 {
	if x < 0 {
		return -1
	}
	return 1
}

// round6 keeps reports byte-stable: numbers are rounded to 6 decimals like the
// gate's own output.
func round6(x float64) float64 {
	if math.Abs(x) > 1e12 {
		return x
	}
	return float64(int64(x*1e6+sign(x)*0.5)) / 1e6
}
