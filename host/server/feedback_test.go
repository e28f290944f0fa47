package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/host/gaps"
)

// readGaps flushes the gap log and reads it back with the package that
// consumes it (ctxgate gaps), strictly: every line must parse.
func readGaps(t testing.TB, s *testServer) []gaps.Event {
	t.Helper()
	s.gaps.Flush()
	f, err := os.Open(s.opts.GapLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, _, err := gaps.ReadEvents(f, gaps.ReadOptions{Strict: true})
	if err != nil {
		t.Fatalf("gap log does not read back: %v", err)
	}
	return evs
}

// rawGaps returns the log's lines as JSON objects (for members the reader
// does not keep, such as comment).
func rawGaps(t testing.TB, s *testServer) []map[string]any {
	t.Helper()
	s.gaps.Flush()
	b, err := os.ReadFile(s.opts.GapLog)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestFeedback(t *testing.T) {
	s := start(t, Options{GapLog: filepath.Join(t.TempDir(), "gaps.jsonl"), FeedbackEntries: 64})
	g := post(t, s.url+"/v1/gate", request(t, "default", "inject"))
	id := g.header.Get(HeaderDecisionID)
	d := mustDecision(t, g.body)

	r := post(t, s.url+"/v1/feedback", mustJSON(t, map[string]string{"decision_id": id, "rating": "up"}))
	if r.status != 200 || !strings.Contains(string(r.body), `"gap_event":false`) {
		t.Fatalf("thumbs up: %d %s", r.status, r.body)
	}
	r = post(t, s.url+"/v1/feedback", mustJSON(t, map[string]string{"decision_id": id, "rating": "down", "comment": "wrong product"}))
	if r.status != 200 || !strings.Contains(string(r.body), `"gap_event":true`) {
		t.Fatalf("thumbs down: %d %s", r.status, r.body)
	}
	evs := readGaps(t, s)
	if len(evs) != 1 {
		t.Fatalf("%d gap events, want 1 (the inject decision is not a gap; the thumbs-down is)", len(evs))
	}
	ev := evs[0]
	var req struct{ Query string }
	decode(t, request(t, "default", "inject"), &req)
	if ev.Kind != "thumbs_down" || ev.DecisionID != id || ev.Query != req.Query || ev.Policy.SHA256 != d.Policy.SHA256 || !ev.HasTime {
		t.Fatalf("event = %+v", ev)
	}
	// The event's top chunks are the decision's chunks by score, kept or
	// not, as the core ranks a gap event's (S1 first here: this decision's
	// dropped chunks score lower).
	var top []string
	for _, c := range d.Chunks {
		if len(top) < 5 {
			top = append(top, c.ID)
		}
	}
	if len(ev.TopChunks) != len(top) || len(top) < 2 || ev.TopChunks[0].ID != top[0] || ev.TopChunks[1].ID != top[1] ||
		!d.Chunks[0].Kept || d.Chunks[1].Kept || ev.Signals["max_similarity"] != 0.88 {
		t.Fatalf("event chunks/signals = %+v %v, want %v", ev.TopChunks, ev.Signals, top)
	}
	if c := rawGaps(t, s)[0]["comment"]; c != "wrong product" {
		t.Fatalf("comment = %v", c)
	}

	wantError(t, post(t, s.url+"/v1/feedback", []byte(`{"decision_id":"nope","rating":"down"}`)), 404, codeNotFound, "decision_id")
	wantError(t, post(t, s.url+"/v1/feedback", mustJSON(t, map[string]string{"decision_id": id, "rating": "meh"})), 422, "bad_field", "rating")
	wantError(t, post(t, s.url+"/v1/feedback", []byte(`{"rating":"up"}`)), 422, "bad_field", "decision_id")
	wantError(t, post(t, s.url+"/v1/feedback", []byte(`{"decision_id":"x","rating":"up","stars":5}`)), 422, "bad_field", "stars")
	wantError(t, post(t, s.url+"/v1/feedback", []byte(`{"decision_id":7}`)), 422, "bad_field", "decision_id")
	wantError(t, post(t, s.url+"/v1/feedback", []byte(`not json`)), 400, "bad_json", "")
}

// TestFeedbackIsBounded: the store keeps the last FeedbackEntries decisions
// (per shard), so old ids are forgotten rather than memory growing.
func TestFeedbackIsBounded(t *testing.T) {
	rs := newRecords(recordShards) // one entry per shard
	d := &decisionView{Action: "inject"}
	for i := range 1000 {
		rs.put(string(rune('a'+i%26))+strings.Repeat("x", i), newRecord("q", nil, d))
	}
	n := 0
	for i := range rs.shards {
		n += len(rs.shards[i].m)
	}
	if n > recordShards {
		t.Fatalf("%d records kept, capacity %d", n, recordShards)
	}
}

// TestGapLogHardRefusalAndLowConfidence: decisions that are gaps are logged
// as the core wrote their gap_event, plus the envelope.
func TestGapLogDecisionEvents(t *testing.T) {
	s := start(t, Options{Policy: PolicySource{Path: "support-agent"}, GapLog: filepath.Join(t.TempDir(), "gaps.jsonl")})
	hard := post(t, s.url+"/v1/gate", request(t, "support-agent", "hard_refusal_below_floor"))
	low := post(t, s.url+"/v1/gate", request(t, "support-agent", "low_confidence_flag"))
	post(t, s.url+"/v1/gate", request(t, "support-agent", "confident_inject"))
	evs := readGaps(t, s)
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2", len(evs))
	}
	for i, want := range []struct {
		kind string
		r    reply
	}{{"refusal_hard", hard}, {"low_confidence", low}} {
		var d struct {
			GapEvent json.RawMessage `json:"gap_event"`
		}
		decode(t, want.r.body, &d)
		if evs[i].Kind != want.kind || evs[i].DecisionID != want.r.header.Get(HeaderDecisionID) {
			t.Fatalf("event %d = %+v, want %s", i, evs[i], want.kind)
		}
		// The line begins with the decision's gap_event bytes.
		line := strings.Split(readFile(t, s.opts.GapLog), "\n")[i]
		if !strings.HasPrefix(line, string(d.GapEvent[:len(d.GapEvent)-1])+",\"time\":") {
			t.Fatalf("line %d does not start with the decision's gap_event:\n%s\n%s", i, line, d.GapEvent)
		}
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
