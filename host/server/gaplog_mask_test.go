package server

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/host/gaps"
)

// maskedRefusal is a request the default policy refuses, with a marker in
// every text field a gap event could carry.
const maskedRefusal = `{"query":"MARKERQ how do zebras file their taxes","query_embedding":[0.1,0.2,0.3],` +
	`"chunks":[{"id":"MARKERID-1","doc_id":"MARKERDOC/zebras.md","text":"Penguins live in Antarctica.","scores":{"vector":0.05},"embedding":[0.3,0.2,0.1]}]}`

// TestGapLogFollowsDecisionLogMask (issue 24, item 10, the gap-log part):
// with decision_log_mask, the gap log carries no query, embedding, feedback
// comment (query) or chunk and document id (text) in plaintext: each text
// becomes a keyed token, the same for the same text, and the event says
// what was erased. Without a mask the markers are there (the test sees
// them). Events still read and still group repeats.
func TestGapLogFollowsDecisionLogMask(t *testing.T) {
	for _, c := range []struct {
		mask               []string
		query, text, there bool
	}{
		{nil, false, false, true},
		{[]string{"query"}, true, false, true},
		{[]string{"text"}, false, true, true},
		{[]string{"all"}, true, true, false},
	} {
		path := filepath.Join(t.TempDir(), "gaps.jsonl")
		s := start(t, Options{GapLog: path, DecisionLog: DecisionLogOptions{Mask: c.mask}})
		var ids []string
		for range 2 {
			r := post(t, s.url+"/v1/gate", []byte(maskedRefusal))
			if r.status != 200 || !strings.Contains(string(r.body), `"action":"refuse"`) {
				t.Fatalf("%v: %d %s", c.mask, r.status, r.body)
			}
			ids = append(ids, r.header.Get(HeaderDecisionID))
		}
		if r := post(t, s.url+"/v1/feedback", []byte(`{"decision_id":"`+ids[0]+`","rating":"down","comment":"MARKERCOMMENT it was wrong"}`)); r.status != 200 {
			t.Fatalf("feedback: %d %s", r.status, r.body)
		}
		s.FlushLogs()
		b, _ := os.ReadFile(path)
		for marker, masked := range map[string]bool{"MARKERQ": c.query, "MARKERCOMMENT": c.query, "0.1,0.2,0.3": c.query, "MARKERID": c.text, "MARKERDOC": c.text} {
			if found := bytes.Contains(b, []byte(marker)); found == masked {
				t.Errorf("mask %v: %q found in the gap log: %v, want %v\n%s", c.mask, marker, found, !masked, b)
			}
		}
		if c.query || c.text {
			if n := bytes.Count(b, []byte(`"erased":[`)); n != 3 {
				t.Errorf("mask %v: %d events say what was erased, want 3:\n%s", c.mask, n, b)
			}
		}
		evs, _, err := gaps.ReadEvents(bytes.NewReader(b), gaps.ReadOptions{Strict: true})
		if err != nil || len(evs) != 3 {
			t.Fatalf("mask %v: %d events, %v\n%s", c.mask, len(evs), err, b)
		}
		if evs[0].Query != evs[1].Query || evs[0].Query != evs[2].Query || strings.HasPrefix(evs[0].Query, "masked:") != c.query {
			t.Errorf("mask %v: queries %q %q %q", c.mask, evs[0].Query, evs[1].Query, evs[2].Query)
		}
		if doc := evs[0].TopChunks[0].DocID; strings.HasPrefix(doc, "masked:") != c.text || doc != evs[1].TopChunks[0].DocID {
			t.Errorf("mask %v: doc ids %q %q", c.mask, doc, evs[1].TopChunks[0].DocID)
		}
	}
}
