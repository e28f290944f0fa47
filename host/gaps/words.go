package gaps

import (
	"strconv"
	"time"
)

// The words a reader outside the team sees: the failure mode and its fix
// in plain language, the signals that explain the mode as sentences, and
// times to the minute. The snake_case names stay in the JSON for machines.

// modeTitles say each failure mode in words.
var modeTitles = map[string]string{
	ModeNoRelevantDocs: "The knowledge base has nothing on this",
	ModeWrongDocs:      "Search brings back the wrong documents",
	ModeAlmostMatched:  "A document comes close but falls just short",
	ModeSplitChunk:     "The answer is split across several passages",
	ModeOverRefusal:    "The answer was there, but was refused or rejected",
	ModeUnclassified:   "No clear pattern: needs a look by hand",
}

// fixTitles say each fix in a few words; Diagnosis.Action says it in full.
var fixTitles = map[string]string{
	FixNewContent:      "Write new content",
	FixBetterRetrieval: "Improve retrieval",
	FixThreshold:       "Review the thresholds",
	FixBetterChunking:  "Re-chunk the documents",
	FixInspect:         "Look at the events by hand",
}

// KindNoun names an event kind in words, singular or plural.
func KindNoun(kind string, n int) string {
	one, many := kind, kind
	switch kind {
	case KindRefusalHard:
		one, many = "hard refusal", "hard refusals"
	case KindRefusalSoft:
		one, many = "soft refusal", "soft refusals"
	case KindThumbsDown:
		one, many = "thumbs-down", "thumbs-downs"
	case KindLowConfidence:
		one, many = "low-confidence answer", "low-confidence answers"
	}
	if n == 1 {
		return one
	}
	return many
}

// kinds are the event kinds in the order reports list them.
var kinds = [4]string{KindRefusalHard, KindRefusalSoft, KindThumbsDown, KindLowConfidence}

// byKind returns the counts in the order of kinds.
func (s *SourceCounts) byKind() [4]int {
	return [4]int{s.RefusalHard, s.RefusalSoft, s.ThumbsDown, s.LowConfidence}
}

// Words lists the non-zero counts in words: "5 low-confidence answers,
// 2 soft refusals" (largest first, ties in the order of kinds).
func (s *SourceCounts) Words() string {
	c := s.byKind()
	order := []int{0, 1, 2, 3}
	for i := 1; i < len(order); i++ { // insertion sort: stable, four items
		for j := i; j > 0 && c[order[j]] > c[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	out := ""
	for _, k := range order {
		if c[k] == 0 {
			continue
		}
		if out != "" {
			out += ", "
		}
		out += itoa(c[k]) + " " + KindNoun(kinds[k], c[k])
	}
	return out
}

// ReadableTime formats a time to the minute in UTC: "2026-03-02 22:58 UTC".
func ReadableTime(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04") + " UTC"
}

// facts are the cluster numbers the rules and the sentences read.
type facts struct {
	best, cov, covBest float64
	hasBest, hasCov    bool
	softOrDown, total  int
}

// why explains a failure mode with the two or three signals behind it, as
// sentences. Scores read to two decimals and coverages as percentages:
// the exact medians are in Diagnosis.Signals.
func why(mode string, f *facts, th *Thresholds) []string {
	var out []string
	best := func() {
		if f.hasBest {
			out = append(out, bestSentence(f.best, th))
		}
	}
	cov := func() {
		if f.hasCov {
			out = append(out, "The passages found contain "+pct(f.cov)+" of the question's key terms.")
		}
	}
	switch mode {
	case ModeSplitChunk:
		out = append(out, "Together, the passages found contain "+pct(f.cov)+" of the question's key terms.",
			"The best single passage contains only "+pct(f.covBest)+" of them.")
	case ModeOverRefusal:
		out = append(out, itoa(f.softOrDown)+" of "+plural(f.total, "event")+" are soft refusals or thumbs-downs.")
		best()
		cov()
	case ModeUnclassified:
		if !f.hasBest {
			return []string{"No event recorded a retrieval score, so the failure cannot be placed."}
		}
		best()
		cov()
		out = append(out, "These numbers fit none of the known patterns.")
	default: // no relevant docs, wrong docs, almost matched: score, then terms
		best()
		cov()
	}
	return out
}

func bestSentence(b float64, th *Thresholds) string {
	s := "The best passage found scores " + f2(b)
	switch {
	case b < th.Floor-th.Near:
		return s + ", far below the " + f2(th.Floor) + " the policy needs to use it."
	case b < th.Floor:
		return s + ", just under the " + f2(th.Floor) + " the policy needs to use it."
	case b < th.LowConfidence:
		return s + ": over the " + f2(th.Floor) + " floor but under the " + f2(th.LowConfidence) + " a confident answer needs."
	}
	return s + ", above the " + f2(th.LowConfidence) + " a confident answer needs."
}

func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

func pct(x float64) string {
	return strconv.Itoa(int(x*100+0.5)) + "%"
}
