package gaps

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func verifyFixture(t *testing.T) *Report {
	t.Helper()
	var evs []Event
	for _, q := range []string{"How do I export invoices to QuickBooks?", "export invoices quickbooks", "export invoices quickbooks",
		"exporting invoice to quickbooks"} {
		evs = append(evs, Event{Kind: KindRefusalHard, Query: q, Signals: S{"evidence_top": 0.1}})
	}
	for _, q := range []string{"okta saml sso setup", "SSO SAML setup with Okta"} {
		evs = append(evs, Event{Kind: KindRefusalSoft, Query: q, Signals: S{"evidence_top": 0.3}})
	}
	evs = append(evs, Event{Kind: KindThumbsDown, Query: "dark mode"})
	return build(t, evs)
}

const retrievalFile = `{"query":"export invoices quickbooks","chunks":[{"id":"a","text":"t","scores":{"vector":0.2,"rerank":0.81}}]}
{"query":"Exporting invoice to QuickBooks","chunks":[{"id":"a","text":"t","scores":{"vector":0.3,"bm25":40}}]}
{"query":"okta saml sso setup","results_per_query":[[{"id":"a","scores":{"vector":0.1}}],[{"id":"b","scores":{"vector":0.5}}]]}
{"query":"SSO SAML setup with Okta","chunks":[{"id":"a","scores":{"boosted":0.35,"vector":0.9}}]}
{"query":"okta saml sso setup","chunks":[]}
{"query":"an unrelated query","chunks":[]}
`

func TestVerifyScores(t *testing.T) {
	rep := verifyFixture(t)
	rts, st, err := ReadRetrievals(strings.NewReader(retrievalFile), ReadOptions{Strict: true})
	if err != nil || st.Events != 6 {
		t.Fatal(err, st)
	}
	res, err := Verify(rep, rts, ScoreJudge{Floor: 0.35}, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Duplicates != 1 || res.Unmatched != 1 {
		t.Errorf("duplicates %d unmatched %d", res.Duplicates, res.Unmatched)
	}
	// Cluster 1: 4 events, 3 distinct queries: one clears on rerank 0.81
	// (rerank wins over vector 0.2), one fails (vector 0.3; BM25 is not
	// read), one has no retrieval line.
	a := res.Clusters[0].Counts
	want := VerifyCounts{Queries: 3, Rerun: 2, Cleared: 1, NotRefused: 1, Failing: 1, Missing: 1, Events: 4, EventsCleared: 2}
	if a != want {
		t.Errorf("cluster 1: %+v, want %+v", a, want)
	}
	if f := res.Clusters[0].StillFailing; len(f) != 1 || f[0].Line != 2 || f[0].Best == nil || *f[0].Best != 0.3 {
		t.Errorf("still failing %+v", f)
	}
	// Cluster 2: both clear: 0.5 in the second results_per_query list, and
	// boosted 0.35 exactly at the floor (boosted wins over vector 0.9).
	if b := res.Clusters[1].Counts; b.Cleared != 2 || b.Failing != 0 || b.Missing != 0 {
		t.Errorf("cluster 2: %+v", b)
	}
	if c := res.Clusters[2].Counts; c.Missing != 1 || c.Rerun != 0 {
		t.Errorf("cluster 3: %+v", c)
	}
	if res.AllCleared() {
		t.Error("AllCleared with failures")
	}
	var md, js bytes.Buffer
	if err := WriteVerifyMarkdown(&md, res); err != nil || !strings.Contains(md.String(), "4 of 6 past queries re-run; 3 now clear (4 of 7 events)") {
		t.Errorf("markdown: %v\n%s", err, md.String())
	}
	if err := WriteVerifyJSON(&js, res); err != nil || !strings.Contains(js.String(), `"still_failing": 1`) {
		t.Errorf("json: %v\n%s", err, js.String())
	}
}

type failingJudge struct{}

func (failingJudge) Name() string { return "failing" }
func (failingJudge) Judge(rt *Retrieval) (Outcome, error) {
	return Outcome{}, errors.New("bad_field: chunks[0].scores.vector: must be a number")
}

func TestVerifyJudgeErrors(t *testing.T) {
	rep := verifyFixture(t)
	rts, _, _ := ReadRetrievals(strings.NewReader(retrievalFile), ReadOptions{Strict: true})
	if _, err := Verify(rep, rts, failingJudge{}, VerifyOptions{}); err == nil || !strings.HasPrefix(err.Error(), "retrieval line 1: bad_field") {
		t.Fatalf("error %v", err)
	}
	res, err := Verify(rep, rts, failingJudge{}, VerifyOptions{SkipErrors: true})
	if err != nil || res.Totals.Errors != 4 || len(res.Clusters[0].ErrorsSeen) != 2 {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestReadRetrievalsBad(t *testing.T) {
	rts, _, err := ReadRetrievals(strings.NewReader(`{"query":"q","chunks":[{"scores":{"vector":"x"}}]}`), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (ScoreJudge{Floor: 0.35}).Judge(&rts[0]); err == nil || !strings.Contains(err.Error(), "chunks.scores.vector: must be a number") {
		t.Errorf("score judge on a bad score: %v", err)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"chunks":[]}`, "line 1: query: missing or empty"},
		{`nope`, "line 1: not JSON"},
	} {
		if _, _, err := ReadRetrievals(strings.NewReader(tc.in), ReadOptions{Strict: true}); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.in, err, tc.want)
		}
	}
}
