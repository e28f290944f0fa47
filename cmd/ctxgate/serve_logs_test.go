package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// servedLogs are the JSON-lines files one serve writes.
type servedLogs struct{ gaps, decisions, feedback string }

func (l servedLogs) all() []string { return []string{l.gaps, l.decisions, l.feedback} }

func newServedLogs(dir string) servedLogs {
	return servedLogs{filepath.Join(dir, "gaps.jsonl"), filepath.Join(dir, "decisions.jsonl"), filepath.Join(dir, "feedback.jsonl")}
}

func (l servedLogs) flags() []string {
	return []string{"--gap-log", l.gaps, "--decision-log", l.decisions, "--decision-log-request", "--feedback-log", l.feedback}
}

// traffic sends refusals (a gap event and a decision line each) and a
// thumbs-down for each (a feedback line and another gap event) from two
// clients until stop is closed; it returns how many decisions it got.
func traffic(base string, stop chan struct{}) func() int {
	req, _ := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", "default", "no_chunks.json"))
	var n atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := http.Post(base+"/v1/gate", "application/json", bytes.NewReader(req))
				if err != nil {
					return // killed
				}
				resp.Body.Close()
				id := resp.Header.Get("X-Ctxgate-Decision-Id")
				n.Add(1)
				fb := `{"decision_id":"` + id + `","rating":"down","comment":"nothing about this ` + strconv.Itoa(int(n.Load())) + `"}`
				if resp, err := http.Post(base+"/v1/feedback", "application/json", bytes.NewReader([]byte(fb))); err == nil {
					resp.Body.Close()
				}
			}
		}()
	}
	return func() int { wg.Wait(); return int(n.Load()) }
}

// wholeLines checks that a file is JSON lines and nothing else: every line
// a JSON object, the last one ended. It returns the number of lines.
func wholeLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("%s ends mid-line: %q", filepath.Base(path), tail(string(b), 80))
	}
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	for i, line := range lines {
		if len(b) > 0 && (!json.Valid(line) || line[0] != '{') {
			t.Errorf("%s:%d is not a JSON object: %q", filepath.Base(path), i+1, tail(string(line), 120))
		}
	}
	return len(lines)
}

// TestServeLogsSurviveTornLines (issue 24, item 8): a real `ctxgate serve`
// is killed with kill -9 under traffic three times, then each of its logs
// (gap, decision, feedback) gets a torn line at its end, as a crash
// mid-write leaves; restarted, serve cuts each back to its last newline
// before appending, so every file is whole JSON lines and the strict
// readers (gaps report --skip-bad=false, decisions join --strict) read
// them. On main the restarted writer left the fragment in the middle of the
// file.
func TestServeLogsSurviveTornLines(t *testing.T) {
	logs := newServedLogs(t.TempDir())
	args := append(append(wasmFlags(t, "tinygo"), "--reload-poll", "0"), logs.flags()...)
	torn := 0
	for range 3 {
		c := startChild(t, nil, args...)
		stop := make(chan struct{})
		wait := traffic(c.base, stop)
		time.Sleep(300 * time.Millisecond)
		c.cmd.Process.Kill()
		<-c.exited
		close(stop)
		wait()
		for _, p := range logs.all() {
			if b, _ := os.ReadFile(p); len(b) > 0 && b[len(b)-1] != '\n' {
				torn++
			}
		}
	}
	t.Logf("3 kill -9s under traffic tore %d of the 9 log ends", torn)
	for _, p := range logs.all() {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"kind":"refusal_hard","query":"a line cut short by a cra`)
		f.Close()
	}

	c := startChild(t, nil, args...)
	stop := make(chan struct{})
	wait := traffic(c.base, stop)
	time.Sleep(200 * time.Millisecond)
	close(stop)
	if n := wait(); n == 0 {
		t.Fatal("no decisions after the restart")
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	<-c.exited
	for _, p := range logs.all() {
		wholeLines(t, p)
	}
	if code, _, errs := cli(t, "", "gaps", "report", "--events", logs.gaps, "--skip-bad=false", "--format", "json"); code != exitOK {
		t.Errorf("gaps report --skip-bad=false: exit %d: %s", code, errs)
	}
	if code, _, errs := cli(t, "", "decisions", "join", "--strict", "--decisions", logs.decisions, "--feedback", logs.feedback); code != exitOK {
		t.Errorf("decisions join --strict: exit %d: %s", code, errs)
	}
}
