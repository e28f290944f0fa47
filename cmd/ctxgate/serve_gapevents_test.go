package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/host/gaps"
	"github.com/ctxgate/ctxgate/policies"
)

// softRefusal is a /v1/validate body whose answer is the default policy's
// refusal line, asking query.
func softRefusal(t *testing.T, query string) []byte {
	t.Helper()
	p, err := gate.DecodePolicy(policies.Default())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"answer": p.Messages.RefusalLine, "tags": []string{"S1"}, "query": query})
	return b
}

// gapEvents reads the gap log as it is now.
func gapEvents(t *testing.T, path string) []gaps.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, _, err := gaps.ReadEvents(f, gaps.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// Gap events come only from decisions the server issued, at most once per
// decision and kind: against a real `ctxgate serve`, 300 soft refusals
// posted to /v1/validate without a decision id log nothing (they used to
// put their query at #1 on /gaps), 101 with a real id log one event with
// the decision's own query, and a forged id is refused and never written.
func TestServeGapEventsOnlyForIssuedDecisions(t *testing.T) {
	dir := t.TempDir()
	gapLog := filepath.Join(dir, "gaps.jsonl")
	base, stderr := serveProcess(t, append([]string{"--gap-log", gapLog, "--reload-poll", "0", "--access-log", "off"}, wasmFlags(t, "tinygo")...)...)
	validate := func(body []byte, hdr ...string) httpReply {
		return send(t, http.MethodPost, base+"/v1/validate", body, hdr...)
	}
	const spam = "Buy cheap pills at evil.example"
	for i := 0; i < 300; i++ {
		if r := validate(softRefusal(t, spam)); r.status != 200 || !bytes.Contains(r.body, []byte(`"soft_refusal":true`)) {
			t.Fatalf("validate without an id: %d %s", r.status, r.body)
		}
	}

	req, err := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", "default", "caveat.json"))
	if err != nil {
		t.Fatal(err)
	}
	g := send(t, http.MethodPost, base+"/v1/gate", req)
	id := g.header.Get("X-Ctxgate-Decision-Id")
	if g.status != 200 || id == "" {
		t.Fatalf("gate: %d %s", g.status, g.body)
	}
	for i := 0; i < 101; i++ {
		if r := validate(softRefusal(t, spam), "X-Ctxgate-Decision-Id", id); r.status != 200 {
			t.Fatalf("validate with the decision's id: %d %s", r.status, r.body)
		}
	}

	// A forged id: the right shape, not signed by the server's key; and
	// one of the wrong shape. Both are refused, as feedback refuses them.
	forged := "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	for _, bad := range []string{forged, "evil.example-" + id} {
		wantAPIError(t, "a forged id", validate(softRefusal(t, spam), "X-Ctxgate-Decision-Id", bad), 404, "not_found", "X-Ctxgate-Decision-Id")
	}

	// Feedback is held to the same: a thumbs-down is one event however
	// often it is sent, and a forged id is refused.
	for i := 0; i < 3; i++ {
		if r := send(t, http.MethodPost, base+"/v1/feedback", []byte(`{"decision_id":"`+id+`","rating":"down"}`)); r.status != 200 {
			t.Fatalf("feedback: %d %s", r.status, r.body)
		}
	}
	wantAPIError(t, "feedback on a forged id", send(t, http.MethodPost, base+"/v1/feedback", []byte(`{"decision_id":"`+forged+`","rating":"down"}`)), 404, "not_found", "decision_id")

	// The caveat decision's own low_confidence event, the one soft
	// refusal and the one thumbs-down.
	waitLines(t, gapLog, 3)
	evs := gapEvents(t, gapLog)
	var q struct{ Query string }
	json.Unmarshal(req, &q)
	if len(evs) != 3 || evs[0].Kind != "low_confidence" || evs[1].Kind != "refusal_soft" || evs[2].Kind != "thumbs_down" ||
		evs[1].DecisionID != id || evs[1].Query != strings.TrimSpace(q.Query) || evs[2].DecisionID != id {
		t.Fatalf("gap log: %d events, want the decision's low_confidence, then one refusal_soft and one thumbs_down for %s with the decision's query: %+v", len(evs), id, evs)
	}
	// A line is counted once it is synced, a moment after it is in the file.
	var metrics string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		metrics = string(send(t, http.MethodGet, base+"/metrics", nil).body)
		if strings.Contains(metrics, `ctxgate_gap_events_total{kind="thumbs_down"} 1`) || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(metrics, `ctxgate_gap_events_total{kind="refusal_soft"} 1`) || !strings.Contains(metrics, `ctxgate_gap_events_total{kind="thumbs_down"} 1`) {
		t.Errorf("metrics: want one refusal_soft and one thumbs_down event:\n%s", grepLines(metrics, "ctxgate_gap_events_total"))
	}
	raw, _ := os.ReadFile(gapLog)
	if bytes.Contains(raw, []byte("evil.example")) || bytes.Contains(raw, []byte(forged)) {
		t.Errorf("the caller's query or the forged id reached the gap log:\n%s", raw)
	}
	if page := send(t, http.MethodGet, base+"/gaps", nil); page.status != 200 || bytes.Contains(page.body, []byte("evil.example")) {
		t.Errorf("/gaps: %d, showing the injected query: %v", page.status, bytes.Contains(page.body, []byte("evil.example")))
	}
	if strings.Contains(stderr.String(), "level=ERROR") {
		t.Errorf("serve logged an error:\n%s", stderr.String())
	}
}

// grepLines is the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
