package server

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestLogRotationOnByDefault (issue 24, item 9): every log serve writes
// (gap, decision, feedback, an access log file) rotates at 64 MiB keeping
// 5 files unless told otherwise; a negative size turns rotation off, and
// a size given is used.
func TestLogRotationOnByDefault(t *testing.T) {
	dir := t.TempDir()
	var out, errw bytes.Buffer
	for _, c := range []struct {
		name     string
		size     int64
		keep     int
		wantSize int64
		wantKeep int
	}{
		{"default", 0, 0, DefaultLogMaxBytes, DefaultLogKeep},
		{"off", -1, 0, 0, DefaultLogKeep},
		{"given", 1 << 20, 2, 1 << 20, 2},
	} {
		p := func(name string) string { return filepath.Join(dir, c.name+"."+name) }
		w, err := OpenAccessLog(p("access.log"), &out, &errw, LogRotation{MaxBytes: c.size, Keep: c.keep})
		if err != nil {
			t.Fatal(err)
		}
		s := start(t, Options{GapLog: p("gaps.jsonl"), GapLogMaxBytes: c.size, GapLogKeep: c.keep,
			DecisionLog: DecisionLogOptions{Path: p("decisions.jsonl"), MaxBytes: c.size, Keep: c.keep},
			FeedbackLog: p("feedback.jsonl"), AccessLog: w})
		logs := map[string]*lineLog{"gap": s.gaps, "decision": s.decLog.lines, "feedback": s.fbState.lines}
		for name, l := range logs {
			if l.maxBytes != c.wantSize || l.keep != c.wantKeep {
				t.Errorf("%s: %s log rotates at %d keeping %d, want %d and %d", c.name, name, l.maxBytes, l.keep, c.wantSize, c.wantKeep)
			}
		}
		if a := w.(*accessLogFile); a.maxBytes != c.wantSize || a.keep != c.wantKeep {
			t.Errorf("%s: access log rotates at %d keeping %d", c.name, a.maxBytes, a.keep)
		}
	}
}
