package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/host"
	"github.com/ctxgate/ctxgate/host/decisionlog"
)

// httpReply is one answer from the running server.
type httpReply struct {
	status int
	header http.Header
	body   []byte
}

func send(t *testing.T, method, url string, body []byte, hdr ...string) httpReply {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return httpReply{resp.StatusCode, resp.Header, b}
}

// wantAPIError checks the gate API's error JSON: exactly
// {"error":{"code","message","field"}} with the status and code expected.
func wantAPIError(t *testing.T, what string, r httpReply, status int, code, field string) {
	t.Helper()
	var env map[string]map[string]string
	if err := json.Unmarshal(r.body, &env); err != nil || len(env) != 1 || env["error"] == nil || len(env["error"]) != 3 {
		t.Fatalf("%s: not the error JSON: %d %s", what, r.status, r.body)
	}
	if e := env["error"]; r.status != status || e["code"] != code || e["field"] != field || e["message"] == "" {
		t.Fatalf("%s: %d %s, want %d %s field %q", what, r.status, r.body, status, code, field)
	}
}

// waitLines waits until path holds n complete lines (the server writes
// them off the request path, within one batch).
func waitLines(t *testing.T, path string, n int) []byte {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if bytes.Count(b, []byte("\n")) >= n {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never held %d lines:\n%s", path, n, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeDecisionLogEndToEnd runs `ctxgate serve` with a decision log,
// a feedback log, a feedback token and an id key, as an operator would;
// decides requests over HTTP; sends good, repeated, unknown, malformed and
// unauthenticated feedback; rotates the decision log with SIGHUP; then
// joins the logs with `ctxgate decisions join` and checks every example:
// its label is the last verdict, and its request, decided again, gives the
// decision that was logged (so calibration sees what production saw).
func TestServeDecisionLogEndToEnd(t *testing.T) {
	dir := t.TempDir()
	decLog, fbLog := filepath.Join(dir, "decisions.jsonl"), filepath.Join(dir, "feedback.jsonl")
	token := "feedback-token-0123456789abcdef"
	os.WriteFile(filepath.Join(dir, "tokens"), []byte("# feedback clients\n"+token+"\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "id.key"), []byte("an id key of more than thirty-two bytes\n"), 0o600)
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--reload-poll", "0",
		"--decision-log", decLog, "--decision-log-request", "--feedback-log", fbLog,
		"--feedback-token-file", filepath.Join(dir, "tokens"), "--decision-id-key-file", filepath.Join(dir, "id.key"),
		"--gap-log", filepath.Join(dir, "gaps.jsonl")}, wasmFlags(t, "tinygo")...)
	srv := startServe(t, args)
	auth := []string{"Authorization", "Bearer " + token}

	type decided struct {
		name, id string
		req      []byte
		decision []byte
	}
	decide := func(name string) decided {
		req, err := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", "default", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		r := send(t, http.MethodPost, srv.base+"/v1/gate", req)
		if r.status != 200 || r.header.Get("X-Ctxgate-Decision-Id") == "" {
			t.Fatalf("%s: %d %s", name, r.status, r.body)
		}
		return decided{name, r.header.Get("X-Ctxgate-Decision-Id"), req, r.body}
	}
	var ds []decided
	for _, name := range []string{"inject", "caveat", "refuse_off_topic"} {
		ds = append(ds, decide(name))
	}
	waitLines(t, decLog, 3)

	// logrotate's way: move the file aside and SIGHUP; the next decisions
	// go to a new file, and the join reads both.
	if err := os.Rename(decLog, decLog+".1"); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	waitLog(t, &srv.stderr, "decision log reopened")
	for _, name := range []string{"refuse_not_answered", "lexical_only_bm25", "no_chunks"} {
		ds = append(ds, decide(name))
	}
	waitLines(t, decLog, 3)

	feedback := func(body string, hdr ...string) httpReply {
		return send(t, http.MethodPost, srv.base+"/v1/feedback", []byte(body), hdr...)
	}
	metricsBefore := send(t, http.MethodGet, srv.base+"/metrics", nil).body
	// Refused: nothing may change.
	wantAPIError(t, "no token", feedback(`{"decision_id":"`+ds[0].id+`","answer_in_sources":true}`), 401, "unauthorized", "")
	wantAPIError(t, "wrong token", feedback(`{"decision_id":"`+ds[0].id+`","answer_in_sources":true}`, "Authorization", "Bearer nope-nope-nope-nope"), 401, "unauthorized", "")
	wantAPIError(t, "unknown id", feedback(`{"decision_id":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","answer_in_sources":true}`, auth...), 404, "not_found", "decision_id")
	wantAPIError(t, "malformed", feedback(`{"decision_id":"`+ds[0].id+`","answer_in_sources":"yes"}`, auth...), 422, "bad_field", "answer_in_sources")
	wantAPIError(t, "not JSON", feedback(`{"decision_id":`, auth...), 400, "bad_json", "")
	wantAPIError(t, "no verdict", feedback(`{"decision_id":"`+ds[0].id+`"}`, auth...), 422, "bad_field", "answer_in_sources")
	if b, _ := os.ReadFile(fbLog); len(b) != 0 {
		t.Fatalf("refused feedback reached the feedback log:\n%s", b)
	}
	if after := send(t, http.MethodGet, srv.base+"/metrics", nil).body; feedbackMetrics(after) != feedbackMetrics(metricsBefore) {
		t.Fatalf("refused feedback moved the feedback metrics:\n%s\n%s", feedbackMetrics(metricsBefore), feedbackMetrics(after))
	}

	// Accepted: labels for five decisions (one relabeled), a rating alone
	// for the sixth.
	labels := map[string]int{}
	for i, v := range []struct {
		d    int
		body string
	}{
		{0, `"answer_in_sources":true,"rating":"up"`},
		{1, `"answer_in_sources":true`},
		{2, `"answer_in_sources":true`}, // relabeled below
		{3, `"answer_in_sources":false,"rating":"down","comment":"it did not know"`},
		{4, `"answer_in_sources":true`},
		{5, `"rating":"down"`},
		{2, `"answer_in_sources":false`}, // the repeat: replaces, is counted, and wins
	} {
		r := feedback(`{"decision_id":"`+ds[v.d].id+`",`+v.body+`}`, auth...)
		if r.status != 200 || strings.Contains(string(r.body), `"recorded":false`) {
			t.Fatalf("feedback %d: %d %s", i, r.status, r.body)
		}
		if i == 6 && !strings.Contains(string(r.body), `"replaced":true`) {
			t.Fatalf("the repeat: %s", r.body)
		}
		if strings.Contains(v.body, "answer_in_sources") {
			labels[ds[v.d].id] = map[bool]int{true: 1, false: 0}[strings.Contains(v.body, ":true")]
		}
	}
	waitLines(t, fbLog, 7)
	if m := string(send(t, http.MethodGet, srv.base+"/metrics", nil).body); !strings.Contains(m, `ctxgate_feedback_replaced_total{field="answer_in_sources"} 1`) ||
		!strings.Contains(m, `ctxgate_feedback_verdicts_total{answer_in_sources="true"} 4`) {
		t.Fatalf("feedback metrics:\n%s", feedbackMetrics([]byte(m)))
	}
	stopServe(t, srv)

	// The join, as a user runs it.
	examples := filepath.Join(dir, "examples.jsonl")
	code, out, errs := cli(t, "", "decisions", "join", "--decisions", decLog+"*", "--feedback", fbLog, "--out", examples)
	if code != exitOK || out != "" || !strings.Contains(errs, "5 examples written (3 labeled 1, 2 labeled 0, 0 without their request) from 6 decisions and 7 feedback lines; "+
		"1 decisions rated without answer_in_sources, 0 feedback lines for decisions not in the logs, 1 values replaced") {
		t.Fatalf("join: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	f, err := os.Open(examples)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ex, err := decisionlog.ReadExamples(f, examples)
	if err != nil || len(ex) != 5 {
		t.Fatalf("examples: %d %v", len(ex), err)
	}
	native, err := host.NewNative(nil)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]decided{}
	for _, d := range ds {
		byID[d.id] = d
	}
	for _, e := range ex {
		d, ok := byID[e.DecisionID]
		if !ok || e.Label != labels[e.DecisionID] {
			t.Fatalf("example %s: label %d, want %d (known: %v)", e.DecisionID, e.Label, labels[e.DecisionID], ok)
		}
		var compact bytes.Buffer
		json.Compact(&compact, d.req)
		if string(e.Request) != compact.String() {
			t.Fatalf("example %s (%s): request\n%s\nwant\n%s", e.DecisionID, d.name, e.Request, compact.String())
		}
		// Decided again, the logged request gives the logged decision.
		again, err := native.Evaluate(context.Background(), e.Request)
		if err != nil {
			t.Fatal(err)
		}
		var logged, now struct {
			Action     string             `json:"action"`
			Confidence float64            `json:"confidence"`
			Signals    map[string]float64 `json:"signals"`
		}
		json.Unmarshal(d.decision, &logged)
		json.Unmarshal(again, &now)
		if e.Action != logged.Action || e.Confidence != logged.Confidence || now.Confidence != e.Confidence ||
			now.Action != e.Action || !sameSignals(e.Signals, logged.Signals) || !sameSignals(now.Signals, e.Signals) {
			t.Fatalf("example %s (%s): %s %v %v; logged %+v; again %+v", e.DecisionID, d.name, e.Action, e.Confidence, e.Signals, logged, now)
		}
	}

	// calibrate reads the joined file and the logs themselves alike: five
	// labeled decisions are far too few for a bound, so it says so, names
	// how many it read, and writes nothing.
	policyOut := filepath.Join(dir, "calibrated.json")
	for _, args := range [][]string{
		{"calibrate", "--data", examples, "--max-hallucination", "0.2", "--out", policyOut},
		{"calibrate", "--decisions", decLog + "*", "--feedback", fbLog, "--max-hallucination", "0.2", "--out", policyOut},
	} {
		code, _, errs := cli(t, "", args...)
		if code != exitFail || !strings.Contains(errs, "no guarantee") || !strings.Contains(errs, "no policy written") {
			t.Errorf("%v: exit %d %s", args, code, errs)
		}
		if _, err := os.Stat(policyOut); err == nil {
			t.Errorf("%v wrote a policy without a guarantee", args)
		}
	}

	// Usage errors and bad files.
	if code, _, errs := cli(t, "", "decisions", "join", "--decisions", decLog); code != exitUsage || !strings.Contains(errs, "required") {
		t.Errorf("no --feedback: exit %d %s", code, errs)
	}
	if code, _, errs := cli(t, "", "decisions", "join", "--decisions", fbLog, "--feedback", decLog); code != exitFail ||
		!strings.Contains(errs, fbLog+":1: a feedback line, not a decision") {
		t.Errorf("swapped files: exit %d %s", code, errs)
	}
	if code, _, errs := cli(t, "", "decisions", "join", "--decisions", filepath.Join(dir, "nothing*"), "--feedback", fbLog); code != exitFail ||
		!strings.Contains(errs, "no file matches") {
		t.Errorf("a glob matching nothing: exit %d %s", code, errs)
	}
}

// feedbackMetrics is the feedback-related lines of a /metrics page.
func feedbackMetrics(page []byte) string {
	var keep []string
	for _, l := range strings.Split(string(page), "\n") {
		// The feedback metrics and feedback's gap events; not the request
		// count by route, which counts refused requests too, nor the
		// decisions' gap events, which the gap log's writer counts when it
		// gets to them (a refusal's could land between two snapshots).
		if strings.Contains(l, "feedback") && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "ctxgate_http_requests_total") ||
			strings.HasPrefix(l, `ctxgate_gap_events_total{kind="thumbs_down"}`) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func sameSignals(a, b map[string]float64) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestServeDecisionLogMasked: with --decision-log-mask query,text no query
// or chunk text, title, embedding or metadata reaches the file, searched
// for byte by byte; the ids and scores are there.
func TestServeDecisionLogMasked(t *testing.T) {
	dir := t.TempDir()
	decLog := filepath.Join(dir, "decisions.jsonl")
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--reload-poll", "0",
		"--decision-log", decLog, "--decision-log-request", "--decision-log-mask", "query,text"}, wasmFlags(t, "tinygo")...)
	srv := startServe(t, args)
	req := []byte(`{"query":"SECRETQUERY where is the reset link sent",
		"query_embedding":[0.1357913579,0.2,0.3],
		"chunks":[{"id":"kb1","doc_id":"kb/security","title":"SECRETTITLE","text":"SECRETTEXT the reset link is sent to the e-mail address on the account",
		  "scores":{"vector":0.88,"bm25":12.5},"embedding":[0.2468024680,0.2,0.3],"metadata":{"owner":"SECRETMETA"}}]}`)
	r := send(t, http.MethodPost, srv.base+"/v1/gate", req)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	b := waitLines(t, decLog, 1)
	stopServe(t, srv)
	for _, secret := range []string{"SECRET", "0.1357913579", "0.2468024680", "reset link"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%q reached the masked decision log:\n%s", secret, b)
		}
	}
	for _, kept := range []string{`"id":"kb1"`, `"doc_id":"kb/security"`, `"bm25":12.5`, `"erased":["query","text"]`, r.header.Get("X-Ctxgate-Decision-Id")} {
		if !bytes.Contains(b, []byte(kept)) {
			t.Errorf("%s is missing from the masked decision log:\n%s", kept, b)
		}
	}
}

// TestDecisionsJoinSkipsTornLines (issue 24, item 8): a torn line in the
// middle of a decision log and of a feedback log (what a writer that
// started a new line after a crash left) no longer stops decisions join
// ("unexpected EOF"): each is skipped and counted on stderr, naming the
// first, and every other line joins. --strict fails on it.
func TestDecisionsJoinSkipsTornLines(t *testing.T) {
	dir := t.TempDir()
	decisions, feedback := filepath.Join(dir, "decisions.jsonl"), filepath.Join(dir, "feedback.jsonl")
	line := func(id string) string {
		return `{"decision_id":"` + id + `","timestamp":"2026-11-28T00:00:00Z","action":"caveat","signals":{"confidence":0.6}}` + "\n"
	}
	os.WriteFile(decisions, []byte(line("d1")+`{"decision_id":"d2","timestamp":"2026-11-`+"\n"+line("d3")), 0o644)
	verdict := func(id string) string {
		return `{"decision_id":"` + id + `","timestamp":"2026-11-28T00:00:01Z","answer_in_sources":true}` + "\n"
	}
	os.WriteFile(feedback, []byte(verdict("d1")+`{"decision_id":"d3","times`+"\n"+verdict("d3")), 0o644)
	code, out, errs := cli(t, "", "decisions", "join", "--decisions", decisions, "--feedback", feedback)
	if code != exitOK || strings.Count(out, "\n") != 2 || !strings.Contains(errs, "2 malformed lines skipped (the first: "+decisions+":2: not JSON") {
		t.Errorf("default: exit %d, %d examples, stderr %q", code, strings.Count(out, "\n"), errs)
	}
	if code, _, errs := cli(t, "", "decisions", "join", "--strict", "--decisions", decisions, "--feedback", feedback); code != exitFail || !strings.Contains(errs, decisions+":2: ") {
		t.Errorf("--strict: exit %d, stderr %q", code, errs)
	}
}
