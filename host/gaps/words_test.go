package gaps

import (
	"reflect"
	"testing"
	"time"
)

// Every mode and fix has words, and each mode explains itself with the
// signals its rule reads.
func TestWhy(t *testing.T) {
	th := DefaultThresholds()
	for _, tc := range []struct {
		name   string
		events []Event
		title  string
		why    []string
	}{
		{"nothing", []Event{ev(KindRefusalHard, S{"evidence_top": 0.1, "coverage": 0.2})}, "The knowledge base has nothing on this", []string{
			"The best passage found scores 0.10, far below the 0.35 the policy needs to use it.",
			"The passages found contain 20% of the question's key terms."}},
		{"almost", []Event{ev(KindRefusalHard, S{"evidence_top": 0.31})}, "A document comes close but falls just short", []string{
			"The best passage found scores 0.31, just under the 0.35 the policy needs to use it."}},
		{"wrong docs", []Event{ev(KindLowConfidence, S{"evidence_top": 0.45, "coverage": 0.2})}, "Search brings back the wrong documents", []string{
			"The best passage found scores 0.45: over the 0.35 floor but under the 0.50 a confident answer needs.",
			"The passages found contain 20% of the question's key terms."}},
		{"split", []Event{ev(KindRefusalSoft, S{"evidence_top": 0.6, "coverage": 0.9, "coverage_best_chunk": 0.3})}, "The answer is split across several passages", []string{
			"Together, the passages found contain 90% of the question's key terms.",
			"The best single passage contains only 30% of them."}},
		{"over-refusal", []Event{ev(KindRefusalSoft, S{"evidence_top": 0.8, "coverage": 0.9}), ev(KindThumbsDown, S{"evidence_top": 0.8, "coverage": 0.9})},
			"The answer was there, but was refused or rejected", []string{
				"2 of 2 events are soft refusals or thumbs-downs.",
				"The best passage found scores 0.80, above the 0.50 a confident answer needs.",
				"The passages found contain 90% of the question's key terms."}},
		{"no score", []Event{ev(KindThumbsDown, nil)}, "No clear pattern: needs a look by hand", []string{
			"No event recorded a retrieval score, so the failure cannot be placed."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := diagnoseAll(tc.events, &th)
			if d.Title != tc.title || !reflect.DeepEqual(d.Why, tc.why) {
				t.Errorf("title %q why %q\nwant %q %q", d.Title, d.Why, tc.title, tc.why)
			}
			if d.FixTitle == "" {
				t.Error("no fix title")
			}
		})
	}
	for m := range modeFix {
		if modeTitles[m] == "" || fixTitles[modeFix[m].fix] == "" {
			t.Errorf("%s has no words", m)
		}
	}
}

func TestSourceWords(t *testing.T) {
	for _, tc := range []struct {
		sc   SourceCounts
		want string
	}{
		{SourceCounts{RefusalHard: 9}, "9 hard refusals"},
		{SourceCounts{RefusalSoft: 2, LowConfidence: 5}, "5 low-confidence answers, 2 soft refusals"},
		{SourceCounts{RefusalHard: 1, RefusalSoft: 1, ThumbsDown: 1, LowConfidence: 1}, "1 hard refusal, 1 soft refusal, 1 thumbs-down, 1 low-confidence answer"},
		{SourceCounts{}, ""},
	} {
		if got := tc.sc.Words(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.sc, got, tc.want)
		}
	}
	if got := ReadableTime(time.Date(2026, 11, 25, 15, 3, 59, 999999999, time.FixedZone("CET", 3600))); got != "2026-11-25 14:03 UTC" {
		t.Errorf("ReadableTime: %q", got)
	}
}
