package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ctxgate/ctxgate/host/gaps"
)

// quotaFile is a real file on a disk that fills up: a write past quota
// bytes writes what fits and fails with ENOSPC, as write(2) does on a full
// disk. failTruncate makes cutting a partial line fail too.
type quotaFile struct {
	*os.File
	quota        *int64
	failTruncate bool
}

func (q *quotaFile) Write(b []byte) (int, error) {
	st, err := q.File.Stat()
	if err != nil {
		return 0, err
	}
	room := *q.quota - st.Size()
	if room >= int64(len(b)) {
		return q.File.Write(b)
	}
	n := 0
	if room > 0 {
		n, _ = q.File.Write(b[:room])
	}
	return n, syscall.ENOSPC
}

func (q *quotaFile) Truncate(size int64) error {
	if q.failTruncate {
		return syscall.EIO
	}
	return q.File.Truncate(size)
}

func gapEvent(i int) []byte {
	return []byte(`{"kind":"refusal_hard","query":"what is the warranty on product ` + strconv.Itoa(i) + `","confidence":0.1}`)
}

// readGapFile reads a gap log strictly: every line must be a whole event.
func readGapFile(t *testing.T, path string) ([]gaps.Event, []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	evs, _, err := gaps.ReadEvents(bytes.NewReader(b), gaps.ReadOptions{Strict: true})
	if err != nil {
		t.Fatalf("the gap log does not read back: %v\n%s", err, b)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("the gap log ends in a partial line: %q", b[max(0, len(b)-80):])
	}
	return evs, b
}

// TestGapLogShortWrite: on a full disk each event is written whole or not at
// all. A write cut short is cut back to the last complete line, so the next
// event, once there is room again, starts a line of its own; only complete
// lines count as written.
func TestGapLogShortWrite(t *testing.T) {
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "gaps.jsonl")
			lineLen := int64(len(gaps.AppendEventLine(nil, gapEvent(0), time.Now(), "id-0", gaps.PolicyRef{Name: "default", Version: "3", SHA256: strings.Repeat("0", 64)})))
			quota := 2*lineLen + lineLen/2 // room for two and a half lines
			m := newMetrics(&Server{})
			logs := &syncBuffer{}
			g, err := openGapLog(path, lineLogOptions{open: func(p string) (logFile, error) {
				f, err := openAppend(p)
				if err != nil {
					return nil, err
				}
				return &quotaFile{File: f.(*os.File), quota: &quota}, nil
			}}, slog.New(slog.NewTextHandler(logs, nil)), m)
			if err != nil {
				t.Fatal(err)
			}
			ref := policyRef{Name: "default", Version: "3", SHA256: strings.Repeat("0", 64)}
			for i := range 6 {
				g.add("refusal_hard", gapEvent(i), "id-"+strconv.Itoa(i), ref)
				if !batch {
					g.Flush()
				}
			}
			g.Flush()
			quota = 1 << 20 // room again
			for i := 6; i < 8; i++ {
				g.add("refusal_hard", gapEvent(i), "id-"+strconv.Itoa(i), ref)
				g.Flush()
			}
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
			evs, _ := readGapFile(t, path)
			var got []string
			for _, e := range evs {
				got = append(got, e.DecisionID)
			}
			if strings.Join(got, ",") != "id-0,id-1,id-6,id-7" {
				t.Fatalf("events on disk %v, want id-0,id-1,id-6,id-7", got)
			}
			written := counterValue(m.gapEvents.WithLabelValues("refusal_hard"))
			lost := counterValue(m.gapLogErrors)
			if written != 4 || lost != 4 {
				t.Fatalf("metrics: written %v (want 4, the complete lines), lost %v (want 4)", written, lost)
			}
			if !strings.Contains(logs.String(), "events lost") {
				t.Errorf("the loss is not logged:\n%s", logs.String())
			}
		})
	}
}

// TestGapLogTornLineIsolated: when the partial line cannot be cut off, the
// next event starts a new line, so one bad line is all that is lost.
func TestGapLogTornLineIsolated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gaps.jsonl")
	quota := int64(150)
	m := newMetrics(&Server{})
	g, err := openGapLog(path, lineLogOptions{open: func(p string) (logFile, error) {
		f, err := openAppend(p)
		if err != nil {
			return nil, err
		}
		return &quotaFile{File: f.(*os.File), quota: &quota, failTruncate: true}, nil
	}}, slog.New(slog.NewTextHandler(io.Discard, nil)), m)
	if err != nil {
		t.Fatal(err)
	}
	g.add("refusal_hard", gapEvent(1), "torn", policyRef{})
	g.Flush()
	quota = 1 << 20
	g.add("refusal_hard", gapEvent(2), "whole", policyRef{})
	g.Close()
	b, _ := os.ReadFile(path)
	evs, st, err := gaps.ReadEvents(bytes.NewReader(b), gaps.ReadOptions{})
	if err != nil || st.Skipped != 1 || len(evs) != 1 || evs[0].DecisionID != "whole" {
		t.Fatalf("skipped %d, events %v, err %v:\n%s", st.Skipped, evs, err, b)
	}
	if got := counterValue(m.gapEvents.WithLabelValues("refusal_hard")); got != 1 {
		t.Fatalf("written %v, want 1", got)
	}
}

// TestGapLogFileSizeLimit is the short write on a real file system: a child
// process runs the writer under RLIMIT_FSIZE (the kernel writes what fits,
// then refuses with EFBIG), and the file must hold only whole lines, as many
// as the metric says.
func TestGapLogFileSizeLimit(t *testing.T) {
	if dir := os.Getenv("CTXGATE_GAPLOG_CHILD"); dir != "" {
		gapLogChild(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestGapLogFileSizeLimit$")
	cmd.Env = append(os.Environ(), "CTXGATE_GAPLOG_CHILD="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var counts struct{ Added, Written, Lost int }
	line := out[bytes.Index(out, []byte("COUNTS ")):]
	line = line[len("COUNTS "):bytes.IndexByte(line, '\n')]
	if err := json.Unmarshal(line, &counts); err != nil {
		t.Fatalf("child output %s: %v", out, err)
	}
	evs, b := readGapFile(t, filepath.Join(dir, "gaps.jsonl"))
	if len(evs) != counts.Written || counts.Written+counts.Lost != counts.Added || counts.Lost == 0 || len(b) > gapLogChildLimit {
		t.Fatalf("%d events on disk (%d bytes, limit %d); child counted %+v", len(evs), len(b), gapLogChildLimit, counts)
	}
	t.Logf("%d bytes on disk: %d whole events, %d lost at the size limit", len(b), counts.Written, counts.Lost)
}

const gapLogChildLimit = 4000

func gapLogChild(dir string) {
	lim := syscall.Rlimit{Cur: gapLogChildLimit, Max: gapLogChildLimit}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Println("setrlimit:", err)
		os.Exit(1)
	}
	m := newMetrics(&Server{})
	g, err := openGapLog(filepath.Join(dir, "gaps.jsonl"), lineLogOptions{}, slog.New(slog.NewTextHandler(io.Discard, nil)), m)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	const added = 40
	for i := range added {
		g.add("refusal_hard", gapEvent(i), "id-"+strconv.Itoa(i), policyRef{Name: "default", Version: "3"})
		if i%3 == 0 {
			g.Flush() // a mix of single lines and batches
		}
	}
	g.Close()
	fmt.Printf("COUNTS {\"Added\":%d,\"Written\":%d,\"Lost\":%d}\n", added,
		int(counterValue(m.gapEvents.WithLabelValues("refusal_hard"))), int(counterValue(m.gapLogErrors)))
}

// TestGapLogRotation: with a size limit the file rotates to .1, .2, ...,
// keeping the newest files; every file holds whole lines and no event is
// lost or doubled among those kept.
func TestGapLogRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gaps.jsonl")
	m := newMetrics(&Server{})
	g, err := openGapLog(path, lineLogOptions{maxBytes: 1000, keep: 3}, slog.New(slog.NewTextHandler(io.Discard, nil)), m)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		g.add("refusal_hard", gapEvent(i), "id-"+strconv.Itoa(i), policyRef{})
		g.Flush()
	}
	g.Close()
	var ids []string
	for _, name := range []string{path + ".3", path + ".2", path + ".1", path} {
		evs, b := readGapFile(t, name)
		if len(b) > 1000+300 {
			t.Errorf("%s: %d bytes, over the limit by more than a line", name, len(b))
		}
		for _, e := range evs {
			ids = append(ids, e.DecisionID)
		}
	}
	if _, err := os.Stat(path + ".4"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("more than keep=3 rotated files: %v", err)
	}
	for i := 1; i < len(ids); i++ {
		a, _ := strconv.Atoi(strings.TrimPrefix(ids[i-1], "id-"))
		b, _ := strconv.Atoi(strings.TrimPrefix(ids[i], "id-"))
		if b != a+1 {
			t.Fatalf("events out of order or missing across the kept files: %v", ids)
		}
	}
	if ids[len(ids)-1] != "id-29" || counterValue(m.gapLogRotations) < 3 {
		t.Fatalf("last event %s, rotations %v", ids[len(ids)-1], counterValue(m.gapLogRotations))
	}
}

// TestGapLogRotationSplitsBatch: a batch larger than the room left is
// written in parts with a rotation between them, so no file passes the
// size by a line or more however many lines one batch holds (under load,
// a batch gathers everything queued during the last fsync).
func TestGapLogRotationSplitsBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gaps.jsonl")
	m := newMetrics(&Server{})
	g, err := openGapLog(path, lineLogOptions{maxBytes: 1000, keep: 20}, slog.New(slog.NewTextHandler(io.Discard, nil)), m)
	if err != nil {
		t.Fatal(err)
	}
	var buf []byte
	var kinds []string
	longest := 0
	for i := range 30 {
		line := gaps.AppendEventLine(nil, gapEvent(i), time.Now(), "id-"+strconv.Itoa(i), gaps.PolicyRef{})
		longest = max(longest, len(line))
		buf, kinds = append(buf, line...), append(kinds, "refusal_hard")
	}
	g.writeBatch(buf, kinds) // one batch of about 6 KB, written by the test: the writer is idle
	g.Close()
	events := 0
	for i := 0; ; i++ {
		name := path
		if i > 0 {
			name += "." + strconv.Itoa(i)
		}
		if _, err := os.Stat(name); err != nil {
			break
		}
		evs, b := readGapFile(t, name)
		events += len(evs)
		if len(b) >= 1000+longest {
			t.Errorf("%s: %d bytes, over 1000 by a line or more", name, len(b))
		}
	}
	if events != 30 || counterValue(m.gapEvents.WithLabelValues("refusal_hard")) != 30 {
		t.Errorf("%d events in the files, %v counted; want 30", events, counterValue(m.gapEvents.WithLabelValues("refusal_hard")))
	}
}

// TestGapLogReopen: after the file is renamed away, Reopen moves the writing
// to a new file at the path; the events before stay in the renamed one.
func TestGapLogReopen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gaps.jsonl")
	g, err := openGapLog(path, lineLogOptions{}, slog.New(slog.NewTextHandler(io.Discard, nil)), newMetrics(&Server{}))
	if err != nil {
		t.Fatal(err)
	}
	g.add("refusal_hard", gapEvent(1), "before", policyRef{})
	os.Rename(path, path+".old")
	if err := g.Reopen(); err != nil {
		t.Fatal(err)
	}
	g.add("refusal_hard", gapEvent(2), "after", policyRef{})
	g.Close()
	old, _ := readGapFile(t, path+".old")
	cur, _ := readGapFile(t, path)
	if len(old) != 1 || old[0].DecisionID != "before" || len(cur) != 1 || cur[0].DecisionID != "after" {
		t.Fatalf("old %v, new %v", old, cur)
	}
	if err := g.Reopen(); err == nil {
		t.Fatal("Reopen after Close succeeded")
	}
}

// counterValue reads one counter.
func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	c.Write(&m)
	return m.GetCounter().GetValue()
}
