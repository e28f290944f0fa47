package server

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/ctxgate/ctxgate/host/decisionlog"
)

func readFeedbackLog(t testing.TB, s *testServer) []decisionlog.Feedback {
	t.Helper()
	s.FlushLogs()
	f, err := os.Open(s.opts.FeedbackLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fs, _, err := decisionlog.ReadFeedback(f, "feedback log")
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// feedbackCounters is every number feedback may move, for "changed nothing".
func feedbackCounters(t testing.TB, s *testServer) map[string]float64 {
	fams := scrape(t, s)
	return map[string]float64{
		"up":               metricValue(t, fams, "ctxgate_feedback_total", "rating", "up"),
		"down":             metricValue(t, fams, "ctxgate_feedback_total", "rating", "down"),
		"true":             metricValue(t, fams, "ctxgate_feedback_verdicts_total", "answer_in_sources", "true"),
		"false":            metricValue(t, fams, "ctxgate_feedback_verdicts_total", "answer_in_sources", "false"),
		"replaced rating":  metricValue(t, fams, "ctxgate_feedback_replaced_total", "field", "rating"),
		"replaced answer":  metricValue(t, fams, "ctxgate_feedback_replaced_total", "field", "answer_in_sources"),
		"feedback lines":   metricValue(t, fams, "ctxgate_feedback_log_lines_total"),
		"thumbs_down gaps": gapCount(fams),
	}
}

func gapCount(fams map[string]*dto.MetricFamily) float64 {
	f := fams["ctxgate_gap_events_total"]
	if f == nil {
		return 0
	}
	n := 0.0
	for _, m := range f.Metric {
		n += m.GetCounter().GetValue()
	}
	return n
}

// TestFeedbackVerdict: feedback carries the calibration verdict; each
// field's latest value is kept and a repeat is counted; the first
// thumbs-down is a gap event and a repeated one is not; every accepted
// feedback is a feedback-log line. Bad feedback changes nothing.
func TestFeedbackVerdict(t *testing.T) {
	dir := t.TempDir()
	token := "s3cret-feedback-token-0123456789"
	s := start(t, Options{GapLog: filepath.Join(dir, "gaps.jsonl"), FeedbackLog: filepath.Join(dir, "feedback.jsonl"),
		FeedbackTokens: []string{"another-token-abcdefghijklmnop", token}})
	auth := []string{"Authorization", "Bearer " + token}
	id := post(t, s.url+"/v1/gate", request(t, "default", "inject")).header.Get(HeaderDecisionID)
	send := func(body string) reply { return post(t, s.url+"/v1/feedback", []byte(body), auth...) }

	before := feedbackCounters(t, s)
	// Refused before anything happens.
	bad := []struct {
		name   string
		r      reply
		status int
		code   string
		field  string
	}{
		{"no token", post(t, s.url+"/v1/feedback", []byte(`{"decision_id":"`+id+`","answer_in_sources":true}`)), 401, codeUnauthorized, ""},
		{"wrong token", post(t, s.url+"/v1/feedback", []byte(`{"decision_id":"`+id+`","answer_in_sources":true}`), "Authorization", "Bearer "+token+"x"), 401, codeUnauthorized, ""},
		{"not bearer", post(t, s.url+"/v1/feedback", []byte(`{"decision_id":"`+id+`","answer_in_sources":true}`), "Authorization", "Basic "+token), 401, codeUnauthorized, ""},
		{"unknown id", send(`{"decision_id":"nope","answer_in_sources":true}`), 404, codeNotFound, "decision_id"},
		{"forged id", send(`{"decision_id":"` + forge(id) + `","answer_in_sources":true}`), 404, codeNotFound, "decision_id"},
		{"no verdict", send(`{"decision_id":"` + id + `"}`), 422, "bad_field", "answer_in_sources"},
		{"verdict a string", send(`{"decision_id":"` + id + `","answer_in_sources":"yes"}`), 422, "bad_field", "answer_in_sources"},
		{"bad rating", send(`{"decision_id":"` + id + `","rating":"meh","answer_in_sources":true}`), 422, "bad_field", "rating"},
		{"unknown field", send(`{"decision_id":"` + id + `","answer_in_sources":true,"stars":5}`), 422, "bad_field", "stars"},
		{"two objects", send(`{"decision_id":"` + id + `","answer_in_sources":true}{}`), 400, "bad_json", ""},
		{"not JSON", send(`yes`), 400, "bad_json", ""},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) { wantError(t, b.r, b.status, b.code, b.field) })
	}
	if got := bad[0].r.header.Get("WWW-Authenticate"); got != `Bearer realm="ctxgate"` {
		t.Errorf("401 WWW-Authenticate = %q", got)
	}
	s.FlushLogs()
	if fb := readFile(t, s.opts.FeedbackLog); fb != "" {
		t.Fatalf("refused feedback reached the feedback log:\n%s", fb)
	}
	if after := feedbackCounters(t, s); !equalCounters(before, after) {
		t.Fatalf("refused feedback moved counters:\n before %v\n after  %v", before, after)
	}

	// Accepted.
	steps := []struct {
		body           string
		gap, replaced  bool
		rating, answer string
	}{
		{`{"decision_id":"` + id + `","answer_in_sources":false}`, false, false, "null", "false"},
		{`{"decision_id":"` + id + `","rating":"down","comment":"wrong product"}`, true, false, `"down"`, "null"},
		{`{"decision_id":"` + id + `","rating":"down","answer_in_sources":true}`, false, true, `"down"`, "true"},
		{`{"decision_id":"` + id + `","rating":"up"}`, false, true, `"up"`, "null"},
	}
	for i, st := range steps {
		r := send(st.body)
		want := `{"decision_id":"` + id + `","rating":` + st.rating + `,"answer_in_sources":` + st.answer +
			`,"gap_event":` + boolStr(st.gap) + `,"replaced":` + boolStr(st.replaced) + `,"recorded":true}`
		if r.status != 200 || string(r.body) != want {
			t.Fatalf("step %d: %d %s\nwant %s", i, r.status, r.body, want)
		}
	}
	fs := readFeedbackLog(t, s)
	if len(fs) != 4 || fs[0].AnswerInSources == nil || *fs[0].AnswerInSources || fs[1].Rating != "down" || fs[1].AnswerInSources != nil ||
		*fs[2].AnswerInSources != true || fs[3].Rating != "up" || fs[0].DecisionID != id {
		t.Fatalf("feedback log: %+v", fs)
	}
	for i := 1; i < len(fs); i++ {
		if fs[i].Timestamp.Before(fs[i-1].Timestamp) {
			t.Fatalf("feedback lines out of time order: %v", fs)
		}
	}
	if strings.Contains(readFile(t, s.opts.FeedbackLog), "wrong product") {
		t.Errorf("the comment reached the feedback log (it belongs in the gap event only)")
	}
	evs := readGaps(t, s)
	if len(evs) != 1 || evs[0].Kind != "thumbs_down" || evs[0].DecisionID != id {
		t.Fatalf("gap events: %+v (one thumbs-down per decision)", evs)
	}
	after := feedbackCounters(t, s)
	want := map[string]float64{"up": 1, "down": 2, "true": 1, "false": 1, "replaced rating": 2, "replaced answer": 1,
		"feedback lines": 4, "thumbs_down gaps": 1}
	if !equalCounters(after, want) {
		t.Fatalf("counters %v, want %v", after, want)
	}
	// The join reads what the server wrote: the latest of each field.
	dec := decisionlog.AppendDecision(nil, &decisionlog.Decision{ID: id, Timestamp: fs[0].Timestamp, Action: "inject"})
	fbFile, _ := os.Open(s.opts.FeedbackLog)
	defer fbFile.Close()
	ex, st, err := decisionlog.Join(strings.NewReader(string(dec)), fbFile)
	if err != nil || len(ex) != 1 || ex[0].Label != 1 || ex[0].Rating != "up" || st.Replaced != 3 {
		t.Fatalf("join: %+v %+v %v", ex, st, err)
	}
}

var discardLog = slog.New(slog.NewTextHandler(io.Discard, nil))

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func equalCounters(a, b map[string]float64) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return len(a) == len(b)
}

// forge flips one character of a valid id's MAC half.
func forge(id string) string {
	b := []byte(id)
	if b[40] == 'A' {
		b[40] = 'B'
	} else {
		b[40] = 'A'
	}
	return string(b)
}

// TestFeedbackForgottenDecision: an id this server issued is accepted after
// its record has been evicted (feedback arrives late), recorded in the
// feedback log without a gap event; an id from a server with another key,
// or a fault's id, is unknown.
func TestFeedbackForgottenDecision(t *testing.T) {
	dir := t.TempDir()
	s := start(t, Options{FeedbackEntries: recordShards, GapLog: filepath.Join(dir, "gaps.jsonl"), FeedbackLog: filepath.Join(dir, "fb.jsonl")})
	first := post(t, s.url+"/v1/gate", request(t, "default", "inject")).header.Get(HeaderDecisionID)
	for range 40 * recordShards { // one entry per shard: the first is long gone
		post(t, s.url+"/v1/gate", request(t, "default", "inject"))
	}
	if s.records.get(first) != nil {
		t.Fatal("the first decision is still remembered")
	}
	r := post(t, s.url+"/v1/feedback", []byte(`{"decision_id":"`+first+`","rating":"down","answer_in_sources":false}`))
	if r.status != 200 || !strings.Contains(string(r.body), `"gap_event":false`) || !strings.Contains(string(r.body), `"recorded":true`) {
		t.Fatalf("late feedback: %d %s", r.status, r.body)
	}
	if fs := readFeedbackLog(t, s); len(fs) != 1 || fs[0].DecisionID != first {
		t.Fatalf("late feedback not recorded: %+v", fs)
	}

	other := start(t, Options{})
	foreign := post(t, other.url+"/v1/gate", request(t, "default", "inject")).header.Get(HeaderDecisionID)
	wantError(t, post(t, s.url+"/v1/feedback", []byte(`{"decision_id":"`+foreign+`","rating":"up"}`)), 404, codeNotFound, "decision_id")
	fault := s.ids.issue(idFault)
	wantError(t, post(t, s.url+"/v1/feedback", []byte(`{"decision_id":"`+fault+`","rating":"up"}`)), 404, codeNotFound, "decision_id")
}

// TestDecisionIDKey: replicas (or restarts) that share decision_id_key
// accept each other's ids; a short key is refused.
func TestDecisionIDKey(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	a := start(t, Options{DecisionIDKey: key})
	b := start(t, Options{DecisionIDKey: key})
	id := post(t, a.url+"/v1/gate", request(t, "default", "inject")).header.Get(HeaderDecisionID)
	if r := post(t, b.url+"/v1/feedback", []byte(`{"decision_id":"`+id+`","answer_in_sources":true}`)); r.status != 200 {
		t.Fatalf("a replica with the same key: %d %s", r.status, r.body)
	}
	if _, err := New(context.Background(), Options{Native: true, Logger: discardLog, DecisionIDKey: key[:31]}); err == nil || !strings.Contains(err.Error(), "32 bytes") {
		t.Fatalf("a 31-byte key: %v", err)
	}
	if _, err := New(context.Background(), Options{Native: true, Logger: discardLog, FeedbackTokens: []string{"short"}}); err == nil || !strings.Contains(err.Error(), "16 characters") {
		t.Fatalf("a short token: %v", err)
	}
}

// TestFeedbackConcurrentVerdicts: many clients relabel one decision at once;
// the verdict the server keeps and the one the join reads from the feedback
// log are the same (timestamps are taken under the decision's lock and
// strictly increase, whatever order the lines reach the file in).
func TestFeedbackConcurrentVerdicts(t *testing.T) {
	dir := t.TempDir()
	s := start(t, Options{Native: true, FeedbackLog: filepath.Join(dir, "fb.jsonl")})
	id := post(t, s.url+"/v1/gate", request(t, "default", "inject")).header.Get(HeaderDecisionID)
	const clients, each = 8, 25
	done := make(chan struct{})
	for c := range clients {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range each {
				v := (c+i)%2 == 0
				body := []byte(`{"decision_id":"` + id + `","answer_in_sources":` + boolStr(v) + `}`)
				if r := post(t, s.url+"/v1/feedback", body); r.status != 200 {
					t.Errorf("%d %s", r.status, r.body)
				}
			}
		}()
	}
	for range clients {
		<-done
	}
	var kept bool
	s.records.withRecord(id, func(r *record) { kept = *r.verdict.answer })
	fs := readFeedbackLog(t, s)
	dec := decisionlog.AppendDecision(nil, &decisionlog.Decision{ID: id, Timestamp: fs[0].Timestamp, Action: "inject"})
	f, _ := os.Open(s.opts.FeedbackLog)
	defer f.Close()
	ex, st, err := decisionlog.Join(strings.NewReader(string(dec)), f)
	if err != nil || len(ex) != 1 || st.Replaced != clients*each-1 || ex[0].Label != b2i(kept) {
		t.Fatalf("server kept %v; join %+v %+v %v", kept, ex, st, err)
	}
	if n := metricValue(t, scrape(t, s), "ctxgate_feedback_replaced_total", "field", "answer_in_sources"); n != clients*each-1 {
		t.Fatalf("replaced = %v, want %d", n, clients*each-1)
	}
}
