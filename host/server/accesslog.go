package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ctxgate/ctxgate/internal/jsonl"
)

// Every request is counted (ctxgate_http_requests_total{route,code}) and,
// with an access log, written as one JSON line (log/slog's JSON handler):
//
//	{"time":"...","level":"INFO","msg":"request","method":"POST","path":"/v1/chat/completions",
//	 "route":"chat_completions","status":200,"bytes":512,"duration_ms":812.4,
//	 "decision_id":"9f2c...-17","action":"caveat","remote":"10.0.0.7:51234"}
//
// plus "error" (the error code) on an error answer, and "aborted": true
// when the response was cut off (the upstream broke mid-answer). A line is
// written for every request, whatever became of it: a 502 from an
// unreachable upstream, a 413, a client that went away. The line is written
// after the response, so it costs the request nothing it waits for.

// recorder is the ResponseWriter the handlers get: it notes the status,
// the body bytes, the route and the error code for the line. Unwrap lets
// http.ResponseController reach the connection (flush, deadlines).
type recorder struct {
	http.ResponseWriter
	status  int
	bytes   int64
	route   string
	errCode string
	traced  *requestSpan // nil unless tracing is on (tracing.go)
}

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// setRoute names the route a request took, when the path alone does not
// say (a pass-through, a gated endpoint reached by another spelling).
func setRoute(w http.ResponseWriter, route string) {
	if rec, ok := w.(*recorder); ok {
		rec.route = route
	}
}

// noteError records the error code an answer carries, for the line.
func noteError(w http.ResponseWriter, code string) {
	if rec, ok := w.(*recorder); ok {
		rec.errCode = code
	}
}

// routeName is the label of a route registered at path: its path without
// the /v1/ prefix, slashes as underscores (/v1/chat/completions is
// chat_completions, /healthz is healthz).
func routeName(path string) string {
	p := strings.TrimPrefix(strings.TrimPrefix(path, "/v1/"), "/")
	return strings.ReplaceAll(p, "/", "_")
}

// observe wraps the router: it counts every request and writes its access
// log line.
func (s *Server) observe(next http.Handler, routes map[string]string) http.Handler {
	if s.trace != nil {
		s.trace.setRoutes(routes)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w, route: routes[r.URL.Path]}
		if rec.route == "" {
			rec.route = "not_found"
		}
		if s.trace != nil {
			r = s.trace.startRequest(rec, r)
		}
		aborted := true
		defer func() { s.logRequest(rec, r, start, aborted) }()
		next.ServeHTTP(rec, r)
		aborted = false
	})
}

func (s *Server) logRequest(rec *recorder, r *http.Request, start time.Time, aborted bool) {
	status := rec.status
	if status == 0 && !aborted {
		status = http.StatusOK // net/http answers 200 for a handler that wrote nothing
	}
	code := statusClass(status)
	if aborted {
		code = "aborted"
	}
	s.metrics.requests.WithLabelValues(rec.route, code).Inc()
	if rec.traced != nil {
		s.trace.endRequest(rec, r, status, aborted)
	}
	if s.access == nil {
		return
	}
	h := rec.Header()
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs,
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("route", rec.route),
		slog.Int("status", status),
		slog.Int64("bytes", rec.bytes),
		slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
		slog.String("decision_id", h.Get(HeaderDecisionID)),
		slog.String("action", h.Get(HeaderAction)),
		slog.String("remote", r.RemoteAddr),
	)
	if rec.errCode != "" {
		attrs = append(attrs, slog.String("error", rec.errCode))
	}
	if aborted {
		attrs = append(attrs, slog.Bool("aborted", true))
	}
	s.access.LogAttrs(context.Background(), slog.LevelInfo, "request", attrs...)
}

// LogRotation is a log file's rotation by size: at MaxBytes the file is
// renamed to FILE.1 (FILE.1 to FILE.2, ..., Keep files kept). MaxBytes 0
// is DefaultLogMaxBytes, negative never; Keep 0 is DefaultLogKeep.
type LogRotation struct {
	MaxBytes int64
	Keep     int
}

// OpenAccessLog opens an access log destination: "stdout", "stderr", a
// file path (appended to, rotated by rot; ReopenAccessLog reopens it, for
// logrotate), or "off" / "" for none (nil).
func OpenAccessLog(dest string, stdout, stderr io.Writer, rot LogRotation) (io.Writer, error) {
	switch dest {
	case "", "off":
		return nil, nil
	case "stdout", "-":
		return stdout, nil
	case "stderr":
		return stderr, nil
	}
	f := &accessLogFile{path: dest}
	f.maxBytes, f.keep = logRotation(rot.MaxBytes, rot.Keep)
	if err := f.Reopen(); err != nil {
		return nil, errors.New("access_log: " + err.Error())
	}
	return f, nil
}

// accessLogFile is an access log file that can be reopened at its path after a
// rename-based rotation, and rotates itself at maxBytes. slog writes one
// whole line per Write, so a rotation falls between lines.
type accessLogFile struct {
	path     string
	maxBytes int64 // 0: never
	keep     int
	mu       sync.Mutex
	f        *os.File
	size     int64
}

func (l *accessLogFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.f.Write(p)
	l.size += int64(n)
	if l.maxBytes > 0 && l.size >= l.maxBytes {
		// A failed rotation keeps writing to the file it has: the next
		// line retries it.
		if shiftRotated(l.path, l.keep) == nil {
			if f, size, err := openAccessLogFile(l.path); err == nil {
				l.f.Close()
				l.f, l.size = f, size
			}
		}
	}
	return n, err
}

// Reopen opens the path again; on an error the old file stays in use.
func (l *accessLogFile) Reopen() error {
	f, size, err := openAccessLogFile(l.path)
	if err != nil {
		return err
	}
	l.mu.Lock()
	old := l.f
	l.f, l.size = f, size
	l.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return nil
}

// openAccessLogFile opens path for appending and returns its size. A line
// a crash left torn at the end is cut off first (jsonl.CutTorn), so the
// next line does not land on it.
func openAccessLogFile(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	var cut int64
	if err == nil {
		cut, err = jsonl.CutTorn(f, st.Size())
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size() - cut, nil
}

func (l *accessLogFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

// ReopenAccessLog reopens an access log file at its path (after logrotate
// renamed it); ctxgate serve calls it on SIGHUP. Other destinations need
// nothing.
func (s *Server) ReopenAccessLog() error {
	if f, ok := s.opts.AccessLog.(interface{ Reopen() error }); ok {
		if err := f.Reopen(); err != nil {
			s.log.Error("access log reopen failed; keeping the old file", "error", err.Error())
			return err
		}
	}
	return nil
}
