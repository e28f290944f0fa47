package gaps

import (
	"strconv"
	"testing"
)

func ev(kind string, signals map[string]float64, top ...float64) Event {
	e := Event{Kind: kind, Query: "q", Signals: signals}
	for i, s := range top {
		e.TopChunks = append(e.TopChunks, TopChunk{ID: "c" + strconv.Itoa(i), DocID: "d", Score: s})
	}
	return e
}

type S = map[string]float64

// diagnoseAll diagnoses events as one cluster.
func diagnoseAll(events []Event, th *Thresholds) Diagnosis {
	idx := make([]int32, len(events))
	var sc SourceCounts
	for i := range events {
		idx[i] = int32(i)
		sc.add(events[i].Kind)
	}
	return diagnose(events, idx, sc, th)
}

func TestDiagnoseRules(t *testing.T) {
	th := DefaultThresholds()
	for _, tc := range []struct {
		name   string
		events []Event
		want   string
	}{
		{"nothing retrieved", []Event{ev(KindRefusalHard, nil)}, ModeNoRelevantDocs},
		{"far below floor, low coverage", []Event{ev(KindRefusalHard, S{"evidence_top": 0.1, "coverage": 0.2})}, ModeNoRelevantDocs},
		{"far below floor, no coverage signal", []Event{ev(KindRefusalHard, S{"max_similarity": 0.2})}, ModeNoRelevantDocs},
		{"far below via top chunks", []Event{ev(KindRefusalHard, nil, 0.05, 0.12)}, ModeNoRelevantDocs},
		{"just under the floor", []Event{ev(KindRefusalHard, S{"evidence_top": 0.31, "coverage": 0.6})}, ModeAlmostMatched},
		{"at floor - near exactly", []Event{ev(KindRefusalHard, S{"evidence_top": 0.25})}, ModeAlmostMatched},
		{"low confidence, decent coverage", []Event{ev(KindLowConfidence, S{"evidence_top": 0.42, "coverage": 0.8, "coverage_best_chunk": 0.7})}, ModeAlmostMatched},
		{"confident but off-topic", []Event{ev(KindLowConfidence, S{"evidence_top": 0.45, "coverage": 0.2})}, ModeWrongDocs},
		{"high similarity, low coverage", []Event{ev(KindRefusalSoft, S{"max_similarity": 0.8, "coverage": 0.3})}, ModeWrongDocs},
		{"spread over chunks", []Event{ev(KindRefusalSoft, S{"evidence_top": 0.6, "coverage": 0.9, "coverage_best_chunk": 0.3})}, ModeSplitChunk},
		{"split beats over-refusal", []Event{ev(KindThumbsDown, S{"evidence_top": 0.9, "coverage": 0.75, "coverage_best_chunk": 0.4})}, ModeSplitChunk},
		{"strong evidence, soft refusals", []Event{
			ev(KindRefusalSoft, S{"evidence_top": 0.8, "coverage": 0.9, "coverage_best_chunk": 0.9}),
			ev(KindThumbsDown, S{"evidence_top": 0.7, "coverage": 0.8}),
			ev(KindLowConfidence, S{"evidence_top": 0.4, "coverage": 0.8})}, ModeOverRefusal},
		{"strong evidence but mostly hard refusals", []Event{
			ev(KindRefusalHard, S{"evidence_top": 0.8, "coverage": 0.9}),
			ev(KindRefusalHard, S{"evidence_top": 0.8, "coverage": 0.9}),
			ev(KindRefusalSoft, S{"evidence_top": 0.8, "coverage": 0.9})}, ModeOverRefusal},
		{"strong score, no coverage recorded", []Event{ev(KindRefusalHard, S{"max_similarity": 0.8})}, ModeOverRefusal},
		{"strong score, partly covered", []Event{ev(KindLowConfidence, S{"max_similarity": 0.78, "coverage": 0.57})}, ModeAlmostMatched},
		{"over the floor, partly covered", []Event{ev(KindLowConfidence, S{"evidence_top": 0.36, "coverage": 0.5})}, ModeAlmostMatched},
		{"far below but terms present", []Event{ev(KindRefusalHard, S{"evidence_top": 0.1, "coverage": 0.9})}, ModeAlmostMatched},
		{"lexical scores only, terms present", []Event{ev(KindLowConfidence, S{"top_score": 0, "coverage": 1, "coverage_best_chunk": 1})}, ModeAlmostMatched},
		{"far below, partly covered", []Event{ev(KindRefusalHard, S{"evidence_top": 0.1, "coverage": 0.6})}, ModeNoRelevantDocs},
		{"thumbs down, no signals", []Event{ev(KindThumbsDown, nil)}, ModeUnclassified},
		// Medians: one odd event does not flip a cluster.
		{"median", []Event{
			ev(KindRefusalHard, S{"evidence_top": 0.1}), ev(KindRefusalHard, S{"evidence_top": 0.12}),
			ev(KindRefusalHard, S{"evidence_top": 0.9})}, ModeNoRelevantDocs},
		// Priority: evidence_top wins over max_similarity and top chunks.
		{"priority", []Event{ev(KindRefusalHard, S{"evidence_top": 0.3, "max_similarity": 0.9}, 0.9)}, ModeAlmostMatched},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := diagnoseAll(tc.events, &th)
			if d.Mode != tc.want {
				t.Fatalf("mode %s (%s), want %s", d.Mode, d.Reason, tc.want)
			}
			if d.Fix == "" || d.Action == "" || d.Reason == "" {
				t.Errorf("incomplete diagnosis %+v", d)
			}
		})
	}
}

func TestModeFixes(t *testing.T) {
	want := map[string]string{
		ModeNoRelevantDocs: FixNewContent, ModeWrongDocs: FixBetterRetrieval, ModeAlmostMatched: FixThreshold,
		ModeSplitChunk: FixBetterChunking, ModeOverRefusal: FixThreshold, ModeUnclassified: FixInspect,
	}
	for m, f := range want {
		if modeFix[m].fix != f {
			t.Errorf("%s -> %s, want %s", m, modeFix[m].fix, f)
		}
	}
	if len(modeFix) != len(want) {
		t.Errorf("modeFix has %d modes", len(modeFix))
	}
}

// End to end: clusters with known failure modes come out of Build with them.
func TestBuildDiagnosesClusters(t *testing.T) {
	var evs []Event
	add := func(n int, kind string, qs []string, s S) {
		for i := 0; i < n; i++ {
			e := ev(kind, s)
			e.Query = qs[i%len(qs)]
			evs = append(evs, e)
		}
	}
	add(6, KindRefusalHard, []string{"How do I export invoices to QuickBooks?", "export invoices quickbooks", "exporting invoice to quickbooks"}, S{"evidence_top": 0.08, "coverage": 0.1})
	add(5, KindRefusalSoft, []string{"What are the SSO SAML setup steps for Okta?", "okta saml sso setup steps"}, S{"evidence_top": 0.62, "coverage": 0.85, "coverage_best_chunk": 0.35})
	add(4, KindRefusalHard, []string{"refund window for annual plans", "annual plan refund window"}, S{"evidence_top": 0.31, "coverage": 0.7})
	add(3, KindLowConfidence, []string{"webhook retry limit", "webhook retries limit"}, S{"evidence_top": 0.44, "coverage": 0.25})
	add(2, KindThumbsDown, []string{"change seat count mid cycle", "changing seat counts mid-cycle"}, S{"evidence_top": 0.81, "coverage": 0.9, "coverage_best_chunk": 0.8})
	rep := build(t, evs)
	want := []struct {
		count int
		mode  string
	}{{6, ModeNoRelevantDocs}, {5, ModeSplitChunk}, {4, ModeAlmostMatched}, {3, ModeWrongDocs}, {2, ModeOverRefusal}}
	if len(rep.Clusters) != len(want) {
		for _, c := range rep.Clusters {
			t.Logf("%d %q %v", c.Count, c.Representative, c.Queries)
		}
		t.Fatalf("%d clusters, want %d", len(rep.Clusters), len(want))
	}
	for i, w := range want {
		if c := rep.Clusters[i]; c.Count != w.count || c.Diagnosis.Mode != w.mode {
			t.Errorf("cluster %d: %d events %s, want %d %s", i+1, c.Count, c.Diagnosis.Mode, w.count, w.mode)
		}
	}
}
