package server

import (
	"errors"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxgate/ctxgate/host/gaps"
)

// gapLog appends knowledge-gap events to a JSONL file (docs/architecture.md:
// the decision's gap_event object plus time, decision_id and policy). One
// goroutine owns the file: handlers hand it lines through a channel and do
// not wait, and it writes whatever has queued up in one write followed by one
// fsync (group commit). So a burst of refusals costs one fsync, not one each,
// and no request holds a lock around disk I/O. An event is on disk within one
// batch of being queued; Close drains and syncs everything queued.
type gapLog struct {
	f       *os.File
	ch      chan gapLine
	done    chan struct{}
	log     *slog.Logger
	m       *metrics
	closeMu sync.Once

	// Counters for Flush: add only increments queued (no lock); the
	// writer broadcasts cond after each batch.
	queued, written atomic.Uint64
	mu              sync.Mutex
	cond            *sync.Cond
}

type gapLine struct {
	b    []byte
	kind string
}

const gapQueue = 4096

func openGapLog(path string, log *slog.Logger, m *metrics) (*gapLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, errors.New("gap log: " + err.Error())
	}
	g := &gapLog{f: f, ch: make(chan gapLine, gapQueue), done: make(chan struct{}), log: log, m: m}
	g.cond = sync.NewCond(&g.mu)
	go g.run()
	return g, nil
}

// add queues one event. It blocks only when gapQueue lines are already
// waiting for the disk: back-pressure rather than a silently dropped gap.
func (g *gapLog) add(kind string, gapEvent []byte, id string, p policyRef) {
	if g == nil || len(gapEvent) < 2 || gapEvent[0] != '{' {
		return
	}
	line := gaps.AppendEventLine(make([]byte, 0, len(gapEvent)+160), gapEvent, time.Now(), id, gaps.PolicyRef(p))
	g.queued.Add(1)
	g.ch <- gapLine{line, kind}
}

func (g *gapLog) run() {
	defer close(g.done)
	var buf []byte
	var kinds []string
	for first := range g.ch {
		buf, kinds = append(buf[:0], first.b...), append(kinds[:0], first.kind)
	more:
		for len(buf) < 1<<20 {
			select {
			case l, ok := <-g.ch:
				if !ok {
					break more
				}
				buf, kinds = append(buf, l.b...), append(kinds, l.kind)
			default:
				break more
			}
		}
		_, err := g.f.Write(buf)
		if err == nil {
			err = g.f.Sync()
		}
		if err != nil {
			g.m.gapLogErrors.Add(float64(len(kinds)))
			g.log.Error("gap log: write failed; events lost", "events", len(kinds), "error", err.Error())
		} else {
			for _, k := range kinds {
				g.m.gapEvents.WithLabelValues(k).Inc()
			}
		}
		g.written.Add(uint64(len(kinds)))
		g.mu.Lock()
		g.cond.Broadcast()
		g.mu.Unlock()
	}
}

// Flush waits until every event queued so far is written and synced.
func (g *gapLog) Flush() {
	if g == nil {
		return
	}
	g.mu.Lock()
	target := g.queued.Load()
	for g.written.Load() < target {
		g.cond.Wait()
	}
	g.mu.Unlock()
}

// Close writes and syncs what is queued and closes the file. No add may run
// concurrently with or after Close (the server closes it after draining
// requests).
func (g *gapLog) Close() error {
	if g == nil {
		return nil
	}
	var err error
	g.closeMu.Do(func() {
		close(g.ch)
		<-g.done
		err = g.f.Close()
	})
	return err
}
