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

// rotatedSet is a log and its rotated files: path, path.1, path.2, ...
// (every one present, up to the first missing), with their sizes.
func rotatedSet(path string) []int64 {
	var sizes []int64
	for i := 0; ; i++ {
		p := path
		if i > 0 {
			p += "." + strconv.Itoa(i)
		}
		st, err := os.Stat(p)
		if err != nil {
			return sizes
		}
		sizes = append(sizes, st.Size())
	}
}

// TestServeLogsStayBounded (issue 24, item 9): a real `ctxgate serve`
// writing a gap log, a decision log with requests, a feedback log and an
// access log file under steady traffic keeps each to keep+1 files of
// under its size plus one line, however much it writes: it rotates them
// over and over, dropping the oldest.
func TestServeLogsStayBounded(t *testing.T) {
	dir := t.TempDir()
	logs := newServedLogs(dir)
	access := filepath.Join(dir, "access.log")
	const size, keep = 32 << 10, 2
	args := append(append(wasmFlags(t, "tinygo"), "--reload-poll", "0", "--access-log", access,
		"--gap-log-max-bytes", strconv.Itoa(size), "--gap-log-keep", strconv.Itoa(keep),
		"--decision-log-max-bytes", strconv.Itoa(size), "--decision-log-keep", strconv.Itoa(keep),
		"--access-log-max-bytes", strconv.Itoa(size), "--access-log-keep", strconv.Itoa(keep)), logs.flags()...)
	c := startChild(t, nil, args...)
	stop := make(chan struct{})
	wait := traffic(c.base, stop)
	deadline := time.Now().Add(60 * time.Second)
	var rotations float64
	for rotations < keep+2 { // every log (the gap log slowest) rotated past its kept files
		page := string(send(t, http.MethodGet, c.base+"/metrics", nil).body)
		rotations = min(metricSum(page, "ctxgate_gap_log_rotations_total"), metricSum(page, "ctxgate_decision_log_rotations_total"),
			metricSum(page, "ctxgate_feedback_log_rotations_total"))
		if time.Now().After(deadline) {
			t.Fatalf("rotations after 60 s: %v", rotations)
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	n := wait()
	c.cmd.Process.Signal(syscall.SIGTERM)
	<-c.exited
	const line = 4 << 10 // longer than any line this traffic writes
	var total int64
	for _, p := range append(logs.all(), access) {
		sizes := rotatedSet(p)
		if len(sizes) > keep+1 {
			t.Errorf("%s: %d files, want at most %d", filepath.Base(p), len(sizes), keep+1)
		}
		for i, sz := range sizes {
			total += sz
			if sz > size+line {
				t.Errorf("%s (file %d): %d bytes, over %d + a line", filepath.Base(p), i, sz, size)
			}
		}
		if len(sizes) < keep+1 {
			t.Errorf("%s: only %d files: it did not rotate past its kept files", filepath.Base(p), len(sizes))
		}
	}
	t.Logf("%d decisions and as many thumbs-downs, %.0f+ rotations of each log; %d bytes on disk for 4 logs (bound %d)",
		n, rotations, total, 4*(keep+1)*(size+line))
}
