package server

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/host/gaps"
)

// gapsPageBytes bounds what one GET /gaps reads: the newest bytes of the gap
// log. 16 MiB is some 30,000 events without embeddings (a second of
// clustering) or 2,000 with 384-dimension ones; older events are left out
// and the page says so. A variable so tests can make it small.
var gapsPageBytes int64 = 16 << 20

// gapsPageBusy lets one page be built at a time in the process: each build
// reads and clusters up to gapsPageBytes, and a burst of reloads should
// queue rather than multiply that.
var gapsPageBusy = make(chan struct{}, 1)

// handleGaps serves the knowledge-gap report of the server's gap log as one
// HTML page (gaps.WriteHTML), built from the log as it is when asked, and
// kept until the log changes (gapsPages). Query parameters mirror `ctxgate
// gaps report`: min_count, floor, low_confidence. With feedback tokens
// configured, the page takes one too: it shows users' questions, and each
// build costs up to a second of CPU.
func (s *Server) handleGaps(w http.ResponseWriter, r *http.Request) {
	if e := s.fbState.authorize(r, "the gap report", true); e != nil {
		w.Header().Add("WWW-Authenticate", `Basic realm="ctxgate", charset="UTF-8"`)
		w.Header().Add("WWW-Authenticate", `Bearer realm="ctxgate"`)
		s.fail(w, e)
		return
	}
	if s.gaps == nil {
		s.fail(w, newAPIError(http.StatusNotFound, codeNotFound, "", "this server keeps no gap log: start it with --gap-log FILE (or gap_log: in the config) to see the knowledge-gap report here"))
		return
	}
	opt := gaps.DefaultOptions()
	minCount := 1
	q := r.URL.Query()
	for _, p := range []struct {
		name string
		set  func(string) error
	}{
		{"min_count", func(v string) (err error) { minCount, err = strconv.Atoi(v); return }},
		{"floor", func(v string) (err error) { opt.Thresholds.Floor, err = strconv.ParseFloat(v, 64); return }},
		{"low_confidence", func(v string) (err error) { opt.Thresholds.LowConfidence, err = strconv.ParseFloat(v, 64); return }},
	} {
		if v := q.Get(p.name); v != "" {
			if err := p.set(v); err != nil {
				s.fail(w, newAPIError(http.StatusBadRequest, gate.CodeBadField, p.name, "must be a number, got "+strconv.Quote(v)))
				return
			}
		}
	}
	// Out-of-range values are refused before the log is read.
	if _, err := gaps.Build(nil, opt); err != nil {
		s.fail(w, newAPIError(http.StatusBadRequest, gate.CodeBadField, "", err.Error()))
		return
	}
	key := strconv.Itoa(max(minCount, 1)) + " " + strconv.FormatFloat(opt.Thresholds.Floor, 'g', -1, 64) +
		" " + strconv.FormatFloat(opt.Thresholds.LowConfidence, 'g', -1, 64)
	// Events already queued are part of the page: a refusal a moment ago
	// shows up on reload.
	s.gaps.Flush()
	page := s.gapPages.get(s.opts.GapLog, key)
	if page == nil {
		select {
		case gapsPageBusy <- struct{}{}:
			defer func() { <-gapsPageBusy }()
		case <-r.Context().Done():
			return
		}
		// Another request may have built it meanwhile.
		if page = s.gapPages.get(s.opts.GapLog, key); page == nil {
			var e *apiError
			if page, e = s.buildGapsPage(opt, minCount, key); e != nil {
				s.fail(w, e)
				return
			}
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	// The page carries the same policy in a meta tag; the header also
	// covers what a meta tag cannot (framing).
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	h.Set("Content-Length", strconv.Itoa(len(page)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(page)
	}
}

// buildGapsPage reads the gap log, clusters it and writes the page, and
// keeps it under key for as long as the log is the file it read.
func (s *Server) buildGapsPage(opt gaps.Options, minCount int, key string) ([]byte, *apiError) {
	evs, notes, file, err := readGapLogTail(s.opts.GapLog, gapsPageBytes)
	if err != nil {
		return nil, newAPIError(http.StatusInternalServerError, gate.CodeInternal, "", "gap log: "+err.Error())
	}
	rep, err := gaps.Build(evs, opt)
	if err != nil {
		return nil, newAPIError(http.StatusBadRequest, gate.CodeBadField, "", err.Error())
	}
	rep.Filter(max(minCount, 1))
	var page bytes.Buffer
	source := "the server's gap log " + filepath.Base(s.opts.GapLog) + ", read when it changes (at most its newest " + byteSize(gapsPageBytes) + ")"
	if err := gaps.WriteHTML(&page, rep, evs, gaps.HTMLOptions{Source: source, Notes: notes}); err != nil {
		return nil, newAPIError(http.StatusInternalServerError, gate.CodeInternal, "", err.Error())
	}
	s.metrics.gapsPageBuilds.Inc()
	s.gapPages.put(file, key, page.Bytes())
	return page.Bytes(), nil
}

// readGapLogTail reads the events in the newest limit bytes of the gap log,
// as it is when opened (file: its identity, size and modification time
// then): events appended meanwhile wait for the next request. A cut inside
// a line drops that line. Malformed lines (a partial write, a hand edit)
// are skipped; notes say, in words, what was left out.
func readGapLogTail(path string, limit int64) (evs []gaps.Event, notes []string, file os.FileInfo, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, nil, err
	}
	size := fi.Size()
	start := int64(0)
	if size > limit {
		// Start one byte early: if that byte ends a line, the first line of
		// the window is whole and is kept.
		start = size - limit - 1
		notes = append(notes, "The gap log holds "+byteSize(size)+"; this page reads its newest "+byteSize(limit)+", so older events are left out.")
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f, start, size-start), 64<<10)
	if start > 0 {
		if err := skipLine(br); err != nil {
			return nil, nil, nil, err
		}
	}
	evs, st, err := gaps.ReadEvents(br, gaps.ReadOptions{TornTail: true})
	if err != nil {
		return nil, nil, nil, err
	}
	if st.Skipped > 0 {
		notes = append(notes, strconv.Itoa(st.Skipped)+" malformed lines were left out (lines counted from the start of what was read); the first: "+st.FirstErrors[0].Error()+".")
	}
	return evs, notes, fi, nil
}

// skipLine discards up to and including the next newline.
func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF {
			return nil
		}
		return err
	}
}

// byteSize prints a byte count for people: "512 bytes", "2 KiB", "16 MiB"
// (to one decimal below 10 of a unit).
func byteSize(n int64) string {
	if n < 1<<10 {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	unit, v := " KiB", float64(n)/(1<<10)
	if n >= 1<<20 {
		unit, v = " MiB", float64(n)/(1<<20)
	}
	if v < 10 && v != float64(int64(v)) {
		return strconv.FormatFloat(v, 'f', 1, 64) + unit
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + unit
}
