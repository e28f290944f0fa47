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
	"github.com/ctxgate/ctxgate/internal/jsonl"
)

// lineLog appends JSON lines to a file: the knowledge-gap log (gap events,
// docs/architecture.md), the decision log and the feedback log. One
// goroutine owns the file: handlers hand it lines through a channel and do
// not wait, and it writes whatever has queued up in one write followed by one
// fsync (group commit). So a burst of lines costs one fsync, not one each,
// and no request holds a lock around disk I/O. A line is on disk within one
// batch of being queued; Close drains and syncs everything queued.
//
// Each line is written whole or not at all: when a write comes up short (a
// full disk, a file size limit), the file is cut back to its last complete
// line, so the next line never lands on the end of a partial one. Only
// complete lines count as written.
type lineLog struct {
	name string // "gap log", "decision log": how the server's own log names it
	path string
	open func(path string) (logFile, error)
	f    logFile
	size int64 // bytes in the current file
	// torn: a partial line could not be cut off; the next write starts on
	// a new line so that only that one line is lost.
	torn bool

	maxBytes int64 // rotate when the file reaches this size; 0: never
	keep     int   // rotated files kept: path.1 (newest) .. path.keep
	// mask erases from gap events what decision_log_mask erases from the
	// decision log (gaplog_mask.go); nil: none, and for the other logs.
	mask *gapMask

	ch      chan queuedLine
	chMu    sync.RWMutex // Reopen's send against Close
	closed  bool
	done    chan struct{}
	log     *slog.Logger
	count   lineCounters
	closeMu sync.Once

	// Counters for Flush: add only increments queued (no lock); the
	// writer broadcasts cond after each batch.
	queued, written atomic.Uint64
	mu              sync.Mutex
	cond            *sync.Cond
}

// logFile is what the writer needs of an *os.File; tests give it a file
// that fails mid-line.
type logFile interface {
	Write([]byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
	Close() error
}

// queuedLine is one line, or (reopen set) a request to reopen the file,
// handled in order with the lines queued before it.
type queuedLine struct {
	b      []byte
	kind   string
	reopen chan error
}

const lineQueue = 4096

// lineCounters are the metrics a log keeps: lines written whole and synced
// (by kind), lines lost, files rotated.
type lineCounters struct {
	written   func(kind string)
	lost      func(lines int)
	rotations func()
}

// Every log serve writes rotates by size unless told not to: without it, a
// decision log with requests grew by 2.86 GB in 20 s under two clients.
// At most keep+1 files of maxBytes each (plus one line) are on disk.
const (
	DefaultLogMaxBytes = 64 << 20
	DefaultLogKeep     = 5
)

// logRotation applies the defaults to a log's rotation settings: a size of
// 0 is DefaultLogMaxBytes and a negative one never rotates (returned as
// 0); keep <= 0 is DefaultLogKeep.
func logRotation(maxBytes int64, keep int) (int64, int) {
	switch {
	case maxBytes == 0:
		maxBytes = DefaultLogMaxBytes
	case maxBytes < 0:
		maxBytes = 0
	}
	if keep <= 0 {
		keep = DefaultLogKeep
	}
	return maxBytes, keep
}

// lineLogOptions are the file's rotation settings.
type lineLogOptions struct {
	maxBytes int64
	keep     int
	open     func(path string) (logFile, error) // nil: os.OpenFile for appending
	mask     *gapMask                           // the gap log's (lineLog.mask)
}

// openAppend opens for appending, and for reading the last byte (a line a
// crash left partial).
func openAppend(path string) (logFile, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
}

func openGapLog(path string, o lineLogOptions, log *slog.Logger, m *metrics) (*lineLog, error) {
	return openLineLog("gap log", path, o, log, lineCounters{
		written:   func(kind string) { m.gapEvents.WithLabelValues(kind).Inc() },
		lost:      func(n int) { m.gapLogErrors.Add(float64(n)) },
		rotations: m.gapLogRotations.Inc,
	})
}

func openLineLog(name, path string, o lineLogOptions, log *slog.Logger, c lineCounters) (*lineLog, error) {
	if o.open == nil {
		o.open = openAppend
	}
	if o.keep <= 0 {
		o.keep = 1
	}
	g := &lineLog{name: name, path: path, open: o.open, maxBytes: o.maxBytes, keep: o.keep, mask: o.mask,
		ch: make(chan queuedLine, lineQueue), done: make(chan struct{}), log: log, count: c}
	if err := g.reopenFile(); err != nil {
		return nil, err
	}
	g.cond = sync.NewCond(&g.mu)
	go g.run()
	return g, nil
}

// reopenFile opens the path anew (after a rename by logrotate, or a
// rotation of ours) and closes the file it replaces.
func (g *lineLog) reopenFile() error {
	f, err := g.open(g.path)
	if err != nil {
		return errors.New(g.name + ": " + err.Error())
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
		g.cutTorn()
	}
	return nil
}

// cutTorn truncates a file a crash left ending mid-line back to its last
// newline, so the fragment is gone rather than left in the middle of the
// file when the next line is appended. If the cut fails, the next write
// starts a new line instead, so only that line is lost.
func (g *lineLog) cutTorn() {
	f, ok := g.f.(jsonl.TornFile)
	if !ok {
		return
	}
	cut, err := jsonl.CutTorn(f, g.size)
	switch {
	case err != nil:
		g.torn = true
		g.log.Error(g.name+": cannot remove the partial line a crash left; the next line starts a new one", "path", g.path, "error", err.Error())
	case cut > 0:
		g.size -= cut
		g.count.lost(1)
		g.log.Warn(g.name+": removed the partial line a crash left at its end", "path", g.path, "bytes", cut)
	}
}

// add queues one gap event. It blocks only when lineQueue lines are already
// waiting for the disk: back-pressure rather than a silently dropped gap.
func (g *lineLog) add(kind string, gapEvent []byte, id string, p policyRef) {
	if g == nil || len(gapEvent) < 2 || gapEvent[0] != '{' {
		return
	}
	if g.mask != nil {
		if gapEvent = g.mask.apply(gapEvent); gapEvent == nil {
			return
		}
	}
	g.addLine(kind, gaps.AppendEventLine(make([]byte, 0, len(gapEvent)+160), gapEvent, time.Now(), id, gaps.PolicyRef(p)))
}

// addLine queues one whole line, newline included; it blocks as add does.
func (g *lineLog) addLine(kind string, line []byte) {
	g.queued.Add(1)
	g.ch <- queuedLine{b: line, kind: kind}
}

// Reopen makes the writer close the file and open its path again, after
// the lines already queued are written: SIGHUP after a rename-based
// rotation (logrotate's default) moves the writing to the new file. On an
// error the old file stays in use.
func (g *lineLog) Reopen() error {
	if g == nil {
		return nil
	}
	done := make(chan error, 1)
	g.chMu.RLock()
	if g.closed {
		g.chMu.RUnlock()
		return errors.New(g.name + ": closed")
	}
	g.ch <- queuedLine{reopen: done}
	g.chMu.RUnlock()
	return <-done
}

func (g *lineLog) run() {
	defer close(g.done)
	var buf []byte
	var kinds []string
	var control *queuedLine
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
				g.log.Error(g.name+": reopen failed; still writing to the old file", "path", g.path, "error", err.Error())
			} else {
				g.log.Info(g.name+" reopened", "path", g.path)
			}
			control.reopen <- err
		}
	}
}

// writeBatch writes the lines in buf (one per kind), in as many parts as
// rotations fall inside it: the lines that fit under maxBytes (at least
// one), then a rotation, then the rest. So a file passes maxBytes by less
// than one line, however large the batch.
func (g *lineLog) writeBatch(buf []byte, kinds []string) {
	for len(kinds) > 0 {
		n, lines := len(buf), len(kinds)
		if g.maxBytes > 0 {
			n, lines = linesWithin(buf, g.maxBytes-g.size)
		}
		g.writeLines(buf[:n], kinds[:lines])
		buf, kinds = buf[n:], kinds[lines:]
	}
}

// linesWithin is the longest run of whole lines at the start of buf that
// fits in room bytes, and how many lines it holds; at least the first line.
func linesWithin(buf []byte, room int64) (n, lines int) {
	for n < len(buf) {
		end := n + bytes.IndexByte(buf[n:], '\n') + 1
		if lines > 0 && int64(end) > room {
			break
		}
		n, lines = end, lines+1
	}
	return n, lines
}

// writeLines writes lines (one per kind) and syncs them. A short write
// keeps the complete lines it wrote and cuts the file back to the last of
// them; the lines after it are lost, logged and counted as such.
func (g *lineLog) writeLines(buf []byte, kinds []string) {
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
		g.count.written(k)
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
func (g *lineLog) cutPartial(partial int64) {
	st, err := g.f.Stat()
	if err == nil {
		err = g.f.Truncate(st.Size() - partial)
	}
	if err != nil {
		g.torn = true
		g.log.Error(g.name+": cannot remove a partial line; the next line starts a new one", "error", err.Error())
	}
}

func (g *lineLog) lost(lines int, err error) {
	g.count.lost(lines)
	msg := "unknown"
	if err != nil {
		msg = err.Error()
	}
	g.log.Error(g.name+": write failed; events lost", "events", lines, "error", msg)
}

// rotate renames path to path.1 (path.1 to path.2, ... up to keep; the
// oldest is replaced) and starts a new file.
func (g *lineLog) rotate() {
	if err := shiftRotated(g.path, g.keep); err != nil {
		g.log.Error(g.name+": rotation failed", "error", err.Error())
		return
	}
	if err := g.reopenFile(); err != nil {
		g.log.Error(g.name+": rotation failed; still writing to the rotated file", "error", err.Error())
		return
	}
	g.count.rotations()
}

// shiftRotated renames path to path.1, path.1 to path.2, ... up to
// path.keep (replacing the oldest): the rename half of a rotation.
func shiftRotated(path string, keep int) error {
	for i := keep - 1; i >= 1; i-- {
		err := os.Rename(path+"."+strconv.Itoa(i), path+"."+strconv.Itoa(i+1))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return os.Rename(path, path+".1")
}

// Flush waits until every line queued so far is written and synced.
func (g *lineLog) Flush() {
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
func (g *lineLog) Close() error {
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
