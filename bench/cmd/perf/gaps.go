package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ctxgate/ctxgate/bench"
)

// gapsRun is one `ctxgate gaps report` over a synthetic log.
type gapsRun struct {
	events        int
	wall, cpu     time.Duration
	rssKB         int64
	gaps, dropped int
	chunks        int
	top           int
}

// gapsScale runs `ctxgate gaps report --events -` on bench.GapLog's events,
// piped in as they are made (no file: 10M events are 5 GB of JSONL), and
// measures the child process: wall time, CPU time, peak RSS.
func gapsScale(c *config, bin string, n int) (gapsRun, error) {
	r := gapsRun{events: n}
	cmd := exec.Command(bin, "gaps", "report", "--events", "-", "--format", "json")
	cmd.Dir = c.root
	in, err := cmd.StdinPipe()
	if err != nil {
		return r, err
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return r, err
	}
	genErr := make(chan error, 1)
	go func() {
		err := bench.GapLog(in, n, 1)
		in.Close()
		genErr <- err
	}()
	err = cmd.Wait()
	r.wall = time.Since(start)
	if gerr := <-genErr; gerr != nil && err == nil {
		err = gerr
	}
	if err != nil {
		return r, errors.New("gaps report: " + err.Error())
	}
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.rssKB = ru.Maxrss // kilobytes on Linux
	}
	var rep struct {
		Stats struct {
			Events, Clusters, Chunks int
			DroppedGaps              int `json:"dropped_gaps"`
		} `json:"stats"`
		Clusters []struct{ Count int } `json:"clusters"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return r, errors.New("gaps report output: " + err.Error())
	}
	if rep.Stats.Events != n {
		return r, fmt.Errorf("gaps report read %d events, want %d", rep.Stats.Events, n)
	}
	r.gaps, r.dropped, r.chunks = rep.Stats.Clusters, rep.Stats.DroppedGaps, rep.Stats.Chunks
	if len(rep.Clusters) > 0 {
		r.top = rep.Clusters[0].Count
	}
	return r, nil
}

// gapsBinary is bin/ctxgate (make bench builds it), else a fresh build.
func gapsBinary(c *config) (string, func(), error) {
	bin := filepath.Join(c.root, "bin", "ctxgate")
	if _, err := os.Stat(bin); err == nil {
		return bin, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "ctxgate-perf-bin-")
	if err != nil {
		return "", nil, err
	}
	bin = filepath.Join(dir, "ctxgate")
	build := exec.Command("go", "build", "-o", bin, "./cmd/ctxgate")
	build.Dir, build.Stderr = c.root, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		return "", nil, errors.New("go build ./cmd/ctxgate: " + err.Error())
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// gapsSection measures the gap report at each size and writes its table.
func gapsSection(c *config) (string, []gapsRun, error) {
	bin, done, err := gapsBinary(c)
	if err != nil {
		return "", nil, err
	}
	defer done()
	machine, started := bench.ThisMachine(), time.Now()
	var runs []gapsRun
	for _, n := range c.gapsEvents {
		logf("gaps report: %d synthetic events", n)
		r, err := gapsScale(c, bin, n)
		if err != nil {
			return "", nil, err
		}
		runs = append(runs, r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "`go run ./bench/cmd/gapslog -n N | ctxgate gaps report --events - --format json`, as `make bench` runs it "+
		"(bench/cmd/perf, started %s on %s cores, load average %s at the start): a synthetic month of gap events "+
		"(a long tail of gaps, the top one 5%% of events, 30%% one-off questions, up to 16 wordings a gap; no embeddings), "+
		"piped in as they are made. Time and peak RSS are the `ctxgate` process's own (the generator runs beside it on the same cores).\n\n",
		started.UTC().Format("2006-01-02 15:04 UTC"), strconv.Itoa(machine.Cores), machine.Load)
	t := bench.Table{Head: []string{"events", "wall", "CPU", "CPU per event", "peak RSS", "chunks", "gaps kept", "gaps dropped", "top gap"}}
	for _, r := range runs {
		t.Add(strconv.Itoa(r.events), r.wall.Round(100*time.Millisecond).String(), r.cpu.Round(100*time.Millisecond).String(),
			bench.Micros(r.cpu/time.Duration(r.events)), strconv.FormatInt(r.rssKB>>10, 10)+" MB", strconv.Itoa(r.chunks),
			strconv.Itoa(r.gaps), strconv.Itoa(r.dropped), strconv.Itoa(r.top))
	}
	b.WriteString(t.String())
	if len(runs) >= 2 {
		a, z := runs[0], runs[len(runs)-1]
		fmt.Fprintf(&b, "\n%d× the events took %.1f× the CPU time and %.2f× the peak memory.\n",
			z.events/a.events, float64(z.cpu)/float64(a.cpu), float64(z.rssKB)/float64(a.rssKB))
	}
	return b.String(), runs, nil
}
