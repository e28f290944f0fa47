package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// upstreamBody reads an upstream's response body under two bounds: no read
// may wait longer than idle for data, and (when set) the whole body must
// have arrived by deadline. Either cancels the upstream request, which
// unblocks the read at once; Read then returns errUpstreamStalled or
// errUpstreamSlow. The transport's ResponseHeaderTimeout stops at the
// headers: without this a stalled body held its handler for as long as the
// upstream liked, whatever write_timeout said. A stream is read by events
// (byEvent): then idle bounds the wait for each complete event, not for
// each byte, so an upstream that drips one event a byte at a time is cut
// (errUpstreamEventSlow) where it used to restart the timer with every
// byte.
type upstreamBody struct {
	body     io.ReadCloser
	cancel   context.CancelFunc
	idle     time.Duration
	deadline time.Time // zero: none (a stream is bounded by idle alone)
	events   bool      // byEvent: only progress restarts the idle timer

	mu     sync.Mutex
	timer  *time.Timer
	reason error // why the watchdog cancelled, nil while it has not
	failed error // the first read error other than EOF: the upstream's side broke
}

var (
	errUpstreamStalled   = errors.New("the upstream sent nothing for longer than upstream_idle_timeout")
	errUpstreamSlow      = errors.New("the upstream did not finish its answer within write_timeout")
	errUpstreamEventSlow = errors.New("the upstream did not complete a stream event within upstream_idle_timeout")
)

func newUpstreamBody(body io.ReadCloser, cancel context.CancelFunc, idle time.Duration, deadline time.Time) *upstreamBody {
	b := &upstreamBody{body: body, cancel: cancel, idle: idle, deadline: deadline}
	b.timer = time.AfterFunc(b.wait(), b.fire)
	return b
}

// wait is how long the next read may take.
func (b *upstreamBody) wait() time.Duration {
	d := b.idle
	if !b.deadline.IsZero() {
		d = min(d, time.Until(b.deadline))
	}
	return max(d, 0)
}

func (b *upstreamBody) fire() {
	b.mu.Lock()
	if b.reason == nil {
		b.reason = errUpstreamStalled
		switch {
		case !b.deadline.IsZero() && !time.Now().Before(b.deadline):
			b.reason = errUpstreamSlow
		case b.events:
			b.reason = errUpstreamEventSlow
		}
	}
	b.mu.Unlock()
	b.cancel()
}

func (b *upstreamBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	b.mu.Lock()
	reason := b.reason
	b.mu.Unlock()
	if reason != nil {
		err = reason
	}
	if err != nil && err != io.EOF && b.failed == nil {
		b.failed = err
	}
	if err == nil && n > 0 && !b.events {
		b.timer.Reset(b.wait())
	}
	return n, err
}

// byEvent makes only progress restart the idle timer, not every read.
func (b *upstreamBody) byEvent() { b.events = true }

// progress restarts the idle timer: an event is complete (or a part of
// one too long to hold has been relayed).
func (b *upstreamBody) progress() { b.timer.Reset(b.wait()) }

func (b *upstreamBody) Close() error {
	b.timer.Stop()
	return b.body.Close()
}

// gateHeaderPrefix is the namespace of the gate's own headers. Only the gate
// sets them: an upstream (or a client, on the way up) that sends its own,
// say X-Ctxgate-Confidence: 0.99, has them removed.
const gateHeaderPrefix = "X-Ctxgate-"

func stripGateHeaders(h http.Header) {
	for k := range h {
		if len(k) >= len(gateHeaderPrefix) && strings.EqualFold(k[:len(gateHeaderPrefix)], gateHeaderPrefix) {
			delete(h, k)
		}
	}
}

// upstreamFailure turns a failed upstream exchange into the client's answer
// and the log's: the answer names no address (the upstream's host, port and
// the transport's wording stay in the server's log).
func upstreamFailure(err error) *apiError {
	var ne net.Error
	var ae answerError
	switch {
	case errors.Is(err, errUpstreamStalled), errors.Is(err, errUpstreamSlow), errors.Is(err, errUpstreamEventSlow):
		return newAPIError(504, codeUpstreamTimeout, "", err.Error())
	case errors.As(err, &ae):
		return newAPIError(502, codeUpstream, "", ae.Error())
	case errors.As(err, &ne) && ne.Timeout(), strings.Contains(err.Error(), "timeout awaiting response headers"):
		return newAPIError(504, codeUpstreamTimeout, "", "the upstream sent no response headers within upstream_timeout")
	}
	return newAPIError(502, codeUpstream, "", "the upstream could not be reached or broke off its answer (the server log has the details)")
}

// relayStream copies server-sent events as they arrive, whole events at a
// time, flushing each, and moves the write deadline forward so a long
// generation is not cut by the server's write timeout. A gated stream goes
// through ed (caveat, sufficiency) one event at a time; nil relays the
// bytes as they are. Each event must be complete within
// upstream_idle_timeout of the one before. A stream the upstream stalls,
// drips or breaks is ended cleanly: an error event, then data: [DONE], so
// a client sees an error rather than a truncated answer it might take as
// complete.
func (s *Server) relayStream(w http.ResponseWriter, r *http.Request, body *upstreamBody, ed streamEditor) {
	body.byEvent()
	rc := http.NewResponseController(w)
	rc.Flush()
	buf := make([]byte, 32<<10)
	var pending []byte // the start of an event not yet complete
	var out []byte     // what an editor made of the complete events
	open := false      // the client has part of an event (one longer than maxPendingEvent)
	send := func(b []byte) bool {
		if len(b) == 0 {
			return true
		}
		rc.SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	for {
		n, err := body.Read(buf)
		if n > 0 {
			pending = append(pending, buf[:n]...)
			end := eventsEnd(pending)
			if end == 0 && len(pending) > maxPendingEvent {
				end = len(pending) // no event is this long; relay it as it comes
			}
			if end > 0 {
				chunk := pending[:end]
				var bad error
				dropped := len(pending) - end
				if ed != nil {
					out = out[:0]
					for len(chunk) > 0 {
						k := nextEvent(chunk)
						if k == 0 { // the tail of an over-long event: as it is
							out, chunk = append(out, chunk...), nil
							break
						}
						if out, bad = ed.event(out, chunk[:k]); bad != nil {
							dropped += len(chunk)
							break
						}
						chunk = chunk[k:]
					}
					chunk = out
				}
				if !send(chunk) {
					return
				}
				body.progress()
				if bad != nil {
					s.endStream(r, send, false, bad, dropped)
					return
				}
				open = eventsEnd(pending[:end]) != end
				pending = append(pending[:0], pending[end:]...)
			}
		}
		if err == io.EOF {
			// The upstream's own ending; then what the editor adds at the
			// end, as an event of its own. An event the upstream did not
			// end with a blank line (some SSE readers dispatch it all the
			// same) is edited as any other, and ended.
			if ed != nil && !open && len(pending) > 0 {
				ev := append(pending, '\n')
				if nextEvent(ev) != len(ev) {
					ev = append(ev, '\n')
				}
				edited, bad := ed.event(nil, ev)
				if bad != nil {
					s.endStream(r, send, false, bad, len(pending))
					return
				}
				pending = edited
			}
			if ed != nil {
				if tail := ed.end(nil); len(tail) > 0 {
					if open || eventsEnd(pending) != len(pending) {
						pending = append(pending, "\n\n"...)
					}
					pending = append(pending, tail...)
				}
			}
			send(pending)
			return
		}
		if err != nil {
			s.endStream(r, send, open, err, len(pending))
			return
		}
	}
}

// endStream ends a stream the upstream cut, stalled, or sent an event of
// that the gateway must not relay (errUnreadableEvent): after the events
// already sent (open: the client has part of one), an error event, then
// data: [DONE], so a client sees an error rather than a truncated answer it
// might take as complete.
func (s *Server) endStream(r *http.Request, send func([]byte) bool, open bool, err error, dropped int) {
	if r.Context().Err() != nil {
		return // the client went away
	}
	s.log.Warn("gateway: upstream stream cut", "upstream", s.upstream.Redacted(), "error", err.Error(),
		"dropped_event_bytes", dropped)
	s.metrics.upstreamCuts.WithLabelValues("stream").Inc()
	var end []byte
	if open {
		end = append(end, "\n\n"...)
	}
	end = append(end, "data: "...)
	end = appendOpenAIError(end, upstreamFailure(err))
	end = append(end, "\n\ndata: [DONE]\n\n"...)
	send(end)
}

// maxPendingEvent bounds the part of one event held back until it is
// complete.
const maxPendingEvent = 1 << 20

// eventsEnd returns the length of the complete events at the start of b:
// the offset just past the last blank line (an event ends with one; lines
// end in \n, \r\n or \r), or 0.
func eventsEnd(b []byte) int {
	for i := len(b) - 1; i > 0; i-- {
		if b[i] != '\n' && b[i] != '\r' {
			continue
		}
		// b[i] ends a line; a blank line ends there if the line before it
		// ended right before it.
		j := i - 1
		if b[i] == '\n' && b[j] == '\r' {
			j--
		}
		if j >= 0 && (b[j] == '\n' || b[j] == '\r') {
			return i + 1
		}
	}
	return 0
}

// relayBody relays a body as it comes, starting with first (what was already
// read), and sends the status only with the first bytes: an upstream that
// stalls or fails before any is answered 504 or 502 like a failed request.
// One that stalls or breaks later aborts the response, so the client sees a
// truncated transfer, not a short answer that looks whole. live (pass-through
// bodies, which may be long downloads or streams of any kind) flushes every
// read to the client and moves the write deadline forward with it.
func (s *Server) relayBody(w http.ResponseWriter, r *http.Request, status int, first []byte, body *upstreamBody, live bool) {
	buf := make([]byte, 32<<10)
	for len(first) == 0 && body.failed == nil {
		n, err := body.Read(buf)
		first = buf[:n]
		if err == io.EOF {
			break
		}
	}
	if len(first) == 0 && body.failed != nil {
		s.upstreamBroke(w, r, body.failed)
		return
	}
	w.WriteHeader(status)
	rc := http.NewResponseController(w)
	// Flushed, so that a cut later reaches the client as a broken transfer
	// rather than as a connection closed before any answer.
	if _, err := w.Write(first); err == nil && rc.Flush() == nil {
		if live {
			for {
				n, err := body.Read(buf)
				if n > 0 {
					rc.SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
					if _, werr := w.Write(buf[:n]); werr != nil || rc.Flush() != nil {
						break
					}
				}
				if err != nil {
					break
				}
			}
		} else {
			io.Copy(w, body)
		}
	}
	if body.failed != nil && r.Context().Err() == nil {
		s.log.Warn("gateway: upstream answer cut; aborting the response", "upstream", s.upstream.Redacted(), "error", body.failed.Error())
		s.metrics.upstreamCuts.WithLabelValues("body").Inc()
		panic(http.ErrAbortHandler)
	}
}

// upstreamBroke answers an upstream body that stalled or failed before
// anything of it was sent. The answer may come at the end of write_timeout,
// so the write deadline is moved on to let it through.
func (s *Server) upstreamBroke(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the client went away
	}
	s.log.Warn("gateway: reading the upstream answer failed", "upstream", s.upstream.Redacted(), "error", err.Error())
	s.metrics.upstreamCuts.WithLabelValues("body").Inc()
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(answerGrace))
	s.failGateway(w, upstreamFailure(err))
}

// answerGrace is the time an error answer gets after the upstream used up
// the write timeout.
const answerGrace = 5 * time.Second
