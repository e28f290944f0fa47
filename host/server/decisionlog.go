package server

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/ctxgate/ctxgate/gate/chat"
	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/host/decisionlog"
)

// DecisionLogOptions configure the decision log: one JSON line per
// decision, in OPA's sense (docs/decision-log.md; the format is package
// decisionlog's).
type DecisionLogOptions struct {
	Path string // empty: no decision log
	// Request logs each decision's gate request as "input" (in gateway mode,
	// the request built from the chat body).
	Request bool
	// Mask erases groups from the logged request: decisionlog.MaskQuery
	// ("query": query, query_embedding) and decisionlog.MaskText ("text":
	// each chunk's text, title, embedding, metadata); "all" is both. A
	// masked request keeps only the fields known to carry no text.
	Mask []string
	// MaxLineBytes caps one line; a line that would pass it is written
	// without the request (then without the chunk outcomes), saying so in
	// "omitted". Default 1 MiB; at most decisionlog.MaxLineBytes.
	MaxLineBytes int
	// MaxBytes rotates the decision log and the feedback log at this size,
	// as gap_log_max_bytes does the gap log (0: DefaultLogMaxBytes;
	// negative: never, SIGHUP reopens); Keep rotated files are kept
	// (default DefaultLogKeep).
	MaxBytes int64
	Keep     int
}

// DefaultDecisionLogMaxLineBytes is the default line cap: a request of 10
// chunks with 3,072-dimension embeddings (about 320 KB) fits with room.
const DefaultDecisionLogMaxLineBytes = 1 << 20

// maskParseDepth bounds the parse of a request being masked. The gate has
// accepted it under its own depth limit (32 by default), so this only
// guards the stack; a deeper request is logged without its input.
const maskParseDepth = 128

type decisionLog struct {
	lines      *lineLog
	request    bool
	maskQuery  bool
	maskText   bool
	erased     []string // the mask groups, as written in "erased"
	maxLine    int
	omittedIn  prometheus.Counter
	omittedChk prometheus.Counter
}

// parseMask reads the mask groups; "all" is every group.
func parseMask(groups []string) (query, text bool, erased []string, err error) {
	for _, g := range groups {
		switch strings.TrimSpace(g) {
		case "":
		case decisionlog.MaskQuery:
			query = true
		case decisionlog.MaskText:
			text = true
		case "all":
			query, text = true, true
		default:
			return false, false, nil, errors.New("decision_log_mask: unknown group " + strconv.Quote(g) + " (want query, text or all)")
		}
	}
	if query {
		erased = append(erased, decisionlog.MaskQuery)
	}
	if text {
		erased = append(erased, decisionlog.MaskText)
	}
	return query, text, erased, nil
}

// logCounters registers a log's lines/errors/rotations counters under
// prefix (ctxgate_decision_log, ctxgate_feedback_log).
func logCounters(f promauto.Factory, prefix, what string) lineCounters {
	lines := f.NewCounter(prometheus.CounterOpts{Name: prefix + "_lines_total",
		Help: what + " lines written whole and synced."})
	lost := f.NewCounter(prometheus.CounterOpts{Name: prefix + "_errors_total",
		Help: what + " lines lost: not written whole, or not synced."})
	rot := f.NewCounter(prometheus.CounterOpts{Name: prefix + "_rotations_total",
		Help: what + " files rotated for reaching decision_log_max_bytes."})
	return lineCounters{
		written:   func(string) { lines.Inc() },
		lost:      func(n int) { lost.Add(float64(n)) },
		rotations: rot.Inc,
	}
}

// openLearningLogs opens the decision log and the feedback log and sets up
// feedback's state (tokens, metrics); Shutdown closes them.
func (s *Server) openLearningLogs() error {
	o := s.opts.DecisionLog
	f := promauto.With(s.metrics.reg)
	fb, err := newFeedbackState(f, s.opts.FeedbackTokens)
	if err != nil {
		return err
	}
	s.fbState = fb
	for _, r := range []string{"up", "down"} {
		s.metrics.feedback.WithLabelValues(r) // zeros rather than missing series
	}
	if o.MaxLineBytes == 0 {
		o.MaxLineBytes = DefaultDecisionLogMaxLineBytes
	}
	if o.MaxLineBytes < 4096 || o.MaxLineBytes > decisionlog.MaxLineBytes {
		return errors.New("decision_log_max_line_bytes: must be between 4096 and " + strconv.Itoa(decisionlog.MaxLineBytes))
	}
	o.MaxBytes, o.Keep = logRotation(o.MaxBytes, o.Keep)
	rot := lineLogOptions{maxBytes: o.MaxBytes, keep: o.Keep}
	query, text, erased, err := parseMask(o.Mask)
	if err != nil {
		return err
	}
	if o.Path != "" {
		omitted := f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_decision_log_omitted_total",
			Help: "Decision-log lines written without a member (input, chunks) to stay under decision_log_max_line_bytes."}, []string{"member"})
		lines, err := openLineLog("decision log", o.Path, rot, s.log, logCounters(f, "ctxgate_decision_log", "Decision-log"))
		if err != nil {
			return err
		}
		s.decLog = &decisionLog{lines: lines, request: o.Request, maskQuery: query, maskText: text, erased: erased,
			maxLine: o.MaxLineBytes, omittedIn: omitted.WithLabelValues("input"), omittedChk: omitted.WithLabelValues("chunks")}
	}
	if s.opts.FeedbackLog != "" {
		lines, err := openLineLog("feedback log", s.opts.FeedbackLog, rot, s.log, logCounters(f, "ctxgate_feedback_log", "Feedback-log"))
		if err != nil {
			s.decLog.close()
			return err
		}
		s.fbState.lines = lines
	}
	return nil
}

func (s *Server) closeLearningLogs() error {
	err := s.decLog.close()
	if s.fbState != nil {
		if cerr := s.fbState.lines.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// ReopenLogs reopens every log file at its path (gap, decision, feedback),
// once the lines already queued are written: ctxgate serve calls it on
// SIGHUP, after a rename-based rotation. It returns the first error; a log
// that fails to reopen keeps writing to its old file.
func (s *Server) ReopenLogs() error {
	err := s.gaps.Reopen()
	if s.decLog != nil {
		if e := s.decLog.lines.Reopen(); err == nil {
			err = e
		}
	}
	if s.fbState != nil {
		if e := s.fbState.lines.Reopen(); err == nil {
			err = e
		}
	}
	return err
}

// FlushLogs waits until every decision and feedback line queued so far is
// on disk (tests, and a caller about to read the files).
func (s *Server) FlushLogs() {
	s.gaps.Flush()
	if s.decLog != nil {
		s.decLog.lines.Flush()
	}
	if s.fbState != nil {
		s.fbState.lines.Flush()
	}
}

func (l *decisionLog) close() error {
	if l == nil {
		return nil
	}
	return l.lines.Close()
}

// log queues d's line. Called after the decision, off the answer's bytes:
// the request (d.request) is masked or compacted here, on the handler's
// goroutine, and the writer goroutine only writes.
func (l *decisionLog) log(id string, d *decisionView) {
	if l == nil {
		return
	}
	l.lines.addLine("decision", l.line(id, d, time.Now()))
}

// line is d's decision-log line, under the line cap.
func (l *decisionLog) line(id string, d *decisionView, now time.Time) []byte {
	rec := decisionlog.Decision{ID: id, Timestamp: now, Path: d.path,
		Policy: decisionlog.PolicyRef(d.Policy), Action: d.Action, Level: d.Level, Band: d.Band,
		Confidence: d.Confidence, Signals: d.Signals, Chunks: make([]decisionlog.Chunk, len(d.Chunks))}
	for i, c := range d.Chunks {
		rec.Chunks[i] = decisionlog.Chunk{ID: c.ID, DocID: c.DocID, Tag: c.Tag, Kept: c.Kept, Reason: c.Reason, Score: c.Score}
	}
	if l.request {
		if in, ok := l.input(d.request); ok {
			rec.Input, rec.Erased = in, l.erased
		} else {
			rec.Omitted = []string{"input"}
			l.omittedIn.Inc()
		}
	}
	line := decisionlog.AppendDecision(make([]byte, 0, 512+len(rec.Input)+64*len(rec.Chunks)), &rec)
	if len(line) > l.maxLine && rec.Input != nil {
		rec.Input, rec.Erased, rec.Omitted = nil, nil, []string{"input"}
		l.omittedIn.Inc()
		line = decisionlog.AppendDecision(line[:0], &rec)
	}
	if len(line) > l.maxLine {
		// Chunk ids are the caller's and may be long; the outcome, policy
		// and signals are bounded by the policy.
		rec.Chunks, rec.Omitted = nil, append(rec.Omitted, "chunks")
		l.omittedChk.Inc()
		line = decisionlog.AppendDecision(line[:0], &rec)
	}
	return line
}

// input is the request as it is logged: compacted, or rebuilt with the
// masked groups left out. ok is false when it cannot be read, or cannot fit
// a line.
func (l *decisionLog) input(request []byte) ([]byte, bool) {
	if len(request) == 0 {
		return nil, false
	}
	if !l.maskQuery && !l.maskText {
		if len(request) > 2*l.maxLine { // whitespace could not bring it under the cap
			return nil, false
		}
		// The gate accepted the request, so it is valid JSON: only the
		// whitespace between tokens goes.
		return chat.AppendCompact(make([]byte, 0, len(request)), request), true
	}
	v, err := jsonx.Parse(request, maskParseDepth)
	if err != nil || v.Kind() != jsonx.Object {
		return nil, false
	}
	return l.appendMaskedRequest(make([]byte, 0, min(len(request), l.maxLine)), &v), true
}

// Masking keeps only the fields known to carry no text (an allowlist, so a
// field a custom module accepts is left out rather than leaked), and the
// text-bearing ones whose group is not masked.
var (
	keepRequest   = map[string]bool{"chunks": true, "results_per_query": true, "now": true}
	queryFields   = map[string]bool{"query": true, "query_embedding": true}
	keepChunk     = map[string]bool{"id": true, "doc_id": true, "scores": true, "updated_at": true, "trust": true, "untrusted": true, "temperature": true}
	textFields    = map[string]bool{"text": true, "title": true, "embedding": true, "metadata": true}
	chunkListKeys = map[string]int{"chunks": 1, "results_per_query": 2} // nesting of chunk objects
)

func (l *decisionLog) appendMaskedRequest(dst []byte, v *jsonx.Value) []byte {
	return appendKept(dst, v, func(k string) bool {
		return keepRequest[k] || queryFields[k] && !l.maskQuery
	}, func(dst []byte, k string, m *jsonx.Value) []byte {
		if depth := chunkListKeys[k]; depth > 0 {
			return l.appendChunkLists(dst, m, depth)
		}
		return jsonx.AppendValue(dst, m)
	})
}

// appendChunkLists writes a list of chunks (depth 1) or of lists of chunks
// (depth 2, results_per_query) with each chunk masked.
func (l *decisionLog) appendChunkLists(dst []byte, v *jsonx.Value, depth int) []byte {
	if v.Kind() != jsonx.Array {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i := 0; i < v.Len(); i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		el := v.Index(i)
		switch {
		case depth > 1:
			dst = l.appendChunkLists(dst, el, depth-1)
		case el.Kind() == jsonx.Object:
			dst = appendKept(dst, el, func(k string) bool {
				return keepChunk[k] || textFields[k] && !l.maskText
			}, func(dst []byte, _ string, m *jsonx.Value) []byte { return jsonx.AppendValue(dst, m) })
		default:
			dst = append(dst, "null"...)
		}
	}
	return append(dst, ']')
}

// appendKept writes the members of v that keep accepts, each value
// written by val.
func appendKept(dst []byte, v *jsonx.Value, keep func(string) bool, val func([]byte, string, *jsonx.Value) []byte) []byte {
	dst = append(dst, '{')
	n := 0
	for i := 0; i < v.Len(); i++ {
		k := v.Key(i)
		if !keep(k) {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = jsonx.AppendString(dst, k)
		dst = append(dst, ':')
		dst = val(dst, k, v.Member(i))
	}
	return append(dst, '}')
}
