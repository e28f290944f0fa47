package server

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
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
//
// Each line is written whole or not at all: when a write comes up short (a
// full disk, a file size limit), the file is cut back to its last complete
// line, so the next event never lands on the end of a partial one. Only
// complete lines count as written.
type gapLog struct {
	path string
	open func(path string) (gapFile, error)
	f    gapFile
	size int64 // bytes in the current file
	// torn: a partial line could not be cut off; the next write starts on
	// a new line so that only that one line is lost.
	torn bool

	maxBytes int64 // rotate when the file reaches this size; 0: never
	keep     int   // rotated files kept: path.1 (newest) .. path.keep

	ch      chan gapLine
	chMu    sync.RWMutex // Reopen's send against Close
	closed  bool
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

// gapFile is what the writer needs of an *os.File; tests give it a file
// that fails mid-line.
type gapFile interface {
	Write([]byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
	Close() error
}

// gapLine is one event line, or (reopen set) a request to reopen the file,
// handled in order with the lines queued before it.
type gapLine struct {
	b      []byte
	kind   string
	reopen chan error
}

const gapQueue = 4096

// gapLogOptions are the file's rotation settings.
type gapLogOptions struct {
	maxBytes int64
	keep     int
	open     func(path string) (gapFile, error) // nil: os.OpenFile for appending
}

// openAppend opens for appending, and for reading the last byte (a line a
// crash left partial).
func openAppend(path string) (gapFile, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
}

func openGapLog(path string, o gapLogOptions, log *slog.Logger, m *metrics) (*gapLog, error) {
	if o.open == nil {
		o.open = openAppend
	}
	if o.keep <= 0 {
		o.keep = 1
	}
	g := &gapLog{path: path, open: o.open, maxBytes: o.maxBytes, keep: o.keep,
		ch: make(chan gapLine, gapQueue), done: make(chan struct{}), log: log, m: m}
	if err := g.reopenFile(); err != nil {
		return nil, err
	}
	g.cond = sync.NewCond(&g.mu)
	go g.run()
	return g, nil
}

// reopenFile opens the path anew (after a rename by logrotate, or a
// rotation of ours) and closes the file it replaces.
func (g *gapLog) reopenFile() error {
	f, err := g.open(g.path)
	if err != nil {
		return errors.New("gap log: " + err.Error())
	}
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	if g.f != nil {
		g.f.Close()
	}
	g.f, g.size, g.torn = f, size, false
	if size > 0 {
		g.torn = !endsLine(f, size)
	}
	return nil
}

// endsLine reports whether the file's last byte is a newline (a file left
// with a partial line by a crash gets its next line on a line of its own).
func endsLine(f gapFile, size int64) bool {
	r, ok := f.(interface {
		ReadAt([]byte, int64) (int, error)
	})
	if !ok {
		return true
	}
	var b [1]byte
	if _, err := r.ReadAt(b[:], size-1); err != nil {
		return true // unreadable: assume it does
	}
	return b[0] == '\n'
}

// add queues one event. It blocks only when gapQueue lines are already
// waiting for the disk: back-pressure rather than a silently dropped gap.
func (g *gapLog) add(kind string, gapEvent []byte, id string, p policyRef) {
	if g == nil || len(gapEvent) < 2 || gapEvent[0] != '{' {
		return
	}
	line := gaps.AppendEventLine(make([]byte, 0, len(gapEvent)+160), gapEvent, time.Now(), id, gaps.PolicyRef(p))
	g.queued.Add(1)
	g.ch <- gapLine{b: line, kind: kind}
}

// Reopen makes the writer close the file and open its path again, after
// the lines already queued are written: SIGHUP after a rename-based
// rotation (logrotate's default) moves the writing to the new file. On an
// error the old file stays in use.
func (g *gapLog) Reopen() error {
	if g == nil {
		return nil
	}
	done := make(chan error, 1)
	g.chMu.RLock()
	if g.closed {
		g.chMu.RUnlock()
		return errors.New("gap log: closed")
	}
	g.ch <- gapLine{reopen: done}
	g.chMu.RUnlock()
	return <-done
}

func (g *gapLog) run() {
	defer close(g.done)
	var buf []byte
	var kinds []string
	var control *gapLine
	for first := range g.ch {
		buf, kinds, control = buf[:0], kinds[:0], nil
		if first.reopen != nil {
			control = &first
		} else {
			buf, kinds = append(buf, first.b...), append(kinds, first.kind)
		}
	more:
		for control == nil && len(buf) < 1<<20 {
			select {
			case l, ok := <-g.ch:
				if !ok {
					break more
				}
				if l.reopen != nil {
					control = &l
					break more
				}
				buf, kinds = append(buf, l.b...), append(kinds, l.kind)
			default:
				break more
			}
		}
		if len(kinds) > 0 {
			g.writeBatch(buf, kinds)
			g.written.Add(uint64(len(kinds)))
			g.mu.Lock()
			g.cond.Broadcast()
			g.mu.Unlock()
		}
		if control != nil {
			err := g.reopenFile()
			if err != nil {
				g.log.Error("gap log: reopen failed; still writing to the old file", "path", g.path, "error", err.Error())
			} else {
				g.log.Info("gap log reopened", "path", g.path)
			}
			control.reopen <- err
		}
	}
}

// writeBatch writes the lines in buf (one per kind) and syncs them. A short
// write keeps the complete lines it wrote and cuts the file back to the
// last of them; the events after it are lost, logged and counted as such.
func (g *gapLog) writeBatch(buf []byte, kinds []string) {
	if g.torn {
		// A partial line is still at the end of the file: end it, so it
		// is one bad line and not the start of this batch's first.
		if _, err := g.f.Write([]byte{'\n'}); err != nil {
			g.lost(len(kinds), err)
			return
		}
		g.size++
		g.torn = false
	}
	n, err := g.f.Write(buf)
	complete := n
	if n < len(buf) {
		complete = bytes.LastIndexByte(buf[:n], '\n') + 1
		if partial := n - complete; partial > 0 {
			g.cutPartial(int64(partial))
		}
	}
	g.size += int64(complete)
	lines := bytes.Count(buf[:complete], []byte{'\n'})
	if err == nil {
		err = g.f.Sync()
		if err != nil {
			lines = 0 // written, perhaps, but not known to be on disk
		}
	}
	for _, k := range kinds[:lines] {
		g.m.gapEvents.WithLabelValues(k).Inc()
	}
	if lines < len(kinds) {
		g.lost(len(kinds)-lines, err)
	}
	if g.maxBytes > 0 && g.size >= g.maxBytes {
		g.rotate()
	}
}

// cutPartial truncates the file by the partial line a short write left. The
// size comes from the file itself (another writer, or a truncation by an
// operator, may have moved it); if the cut fails, the next write starts a
// new line instead.
func (g *gapLog) cutPartial(partial int64) {
	st, err := g.f.Stat()
	if err == nil {
		err = g.f.Truncate(st.Size() - partial)
	}
	if err != nil {
		g.torn = true
		g.log.Error("gap log: cannot remove a partial line; the next event starts a new line", "error", err.Error())
	}
}

func (g *gapLog) lost(events int, err error) {
	g.m.gapLogErrors.Add(float64(events))
	msg := "unknown"
	if err != nil {
		msg = err.Error()
	}
	g.log.Error("gap log: write failed; events lost", "events", events, "error", msg)
}

// rotate renames path to path.1 (path.1 to path.2, ... up to keep; the
// oldest is replaced) and starts a new file.
func (g *gapLog) rotate() {
	for i := g.keep - 1; i >= 1; i-- {
		err := os.Rename(g.path+"."+strconv.Itoa(i), g.path+"."+strconv.Itoa(i+1))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			g.log.Error("gap log: rotation failed", "error", err.Error())
			return
		}
	}
	if err := os.Rename(g.path, g.path+".1"); err != nil {
		g.log.Error("gap log: rotation failed", "error", err.Error())
		return
	}
	if err := g.reopenFile(); err != nil {
		g.log.Error("gap log: rotation failed; still writing to the rotated file", "error", err.Error())
		return
	}
	g.m.gapLogRotations.Inc()
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
		g.chMu.Lock()
		g.closed = true
		close(g.ch)
		g.chMu.Unlock()
		<-g.done
		err = g.f.Close()
	})
	return err
}
