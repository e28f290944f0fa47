package server

import (
	"errors"
	"io"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// The bodies the server holds whole (request bodies it reads before
// answering, the upstream's answers it edits) share one budget,
// max_inflight_body_bytes: a body takes from it as it grows, while its
// bytes arrive, and gives back when the server is done with it. A body
// that would take more than is left is refused at once (503 overloaded,
// Retry-After) rather than waited for: a client that holds a connection
// open costs the budget only the bytes it has really sent. Without the
// bound, 250 connections holding 8 MiB bodies took the server from 23 MB
// to 2 GB.
//
// Memory the runtime has freed stays with the process until its
// scavenger returns it, long after a burst. When the bodies in flight
// drop to none after at least returnAfter of them, the server returns its
// free memory to the operating system (at most once a second).

const (
	defaultInflightBodyBytes = 64 << 20
	returnAfter              = 16 << 20
	// firstBodyBuffer is the first buffer a body of unknown or large size
	// is read into; it doubles as bytes arrive.
	firstBodyBuffer = 64 << 10
)

// errOverloaded: the budget cannot take a body's next bytes.
var errOverloaded = errors.New("the server holds max_inflight_body_bytes of bodies in memory; retry shortly")

// bodyBudget is max_inflight_body_bytes and what is taken of it.
type bodyBudget struct {
	max int64 // <= 0: no bound

	mu       sync.Mutex
	used     int64
	peak     int64 // the most taken since memory was last returned
	returned time.Time
	freeing  atomic.Bool
}

// take reserves n bytes, or reports false when they would pass the bound.
func (b *bodyBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.max > 0 && b.used+n > b.max {
		return false
	}
	b.used += n
	b.peak = max(b.peak, b.used)
	return true
}

// give returns n bytes; the last body of a large burst returns the freed
// memory to the operating system.
func (b *bodyBudget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	free := b.used == 0 && b.peak >= returnAfter && time.Since(b.returned) >= time.Second
	if free {
		b.peak, b.returned = 0, time.Now()
	}
	b.mu.Unlock()
	if free && b.freeing.CompareAndSwap(false, true) {
		go func() {
			defer b.freeing.Store(false)
			debug.FreeOSMemory()
		}()
	}
}

// inUse is what is taken now.
func (b *bodyBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// heldBody is what a body read under the budget holds of it; release
// gives it back, once.
type heldBody struct {
	from *bodyBudget
	n    atomic.Int64
}

func (h *heldBody) release() {
	if h == nil {
		return
	}
	if n := h.n.Swap(0); n > 0 {
		h.from.give(n)
	}
}

// readHeld reads r to its end, or to more than limit bytes (then it stops:
// the result holds limit+1 bytes), taking the buffer's size from the
// budget as it grows. size is the declared length (-1: unknown). On an
// error the bytes are given back; errOverloaded when the budget ran out.
func (b *bodyBudget) readHeld(r io.Reader, size, limit int64) ([]byte, *heldBody, error) {
	h := &heldBody{from: b}
	end := limit + 1
	if size >= 0 {
		end = min(end, size+1)
	}
	var buf []byte
	for {
		if len(buf) == cap(buf) {
			next := min(max(2*int64(cap(buf)), firstBodyBuffer), end)
			if next <= int64(cap(buf)) {
				next = int64(cap(buf)) + firstBodyBuffer // longer than declared
			}
			grow := next - int64(cap(buf))
			if !b.take(grow) {
				h.release()
				return nil, nil, errOverloaded
			}
			h.n.Add(grow)
			nb := make([]byte, len(buf), next)
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case int64(len(buf)) > limit, err == io.EOF:
			return buf, h, nil
		case err != nil:
			h.release()
			return nil, nil, err
		}
	}
}

// releasingBody is a request body for the upstream that lets go of its bytes,
// and gives back what the budget holds for the request, once the transport
// has read them all: the transport keeps its request (and so its body
// reader) until the answer ends, which for a stream may be minutes. It
// has no GetBody, so a request is not sent again after its body was
// written (an HTTP/2 stream refused after that is a 502).
type releasingBody struct {
	b    []byte
	held *heldBody
}

func (s *releasingBody) Read(p []byte) (int, error) {
	n := copy(p, s.b)
	s.b = s.b[n:]
	if len(s.b) == 0 {
		s.b = nil
		s.held.release()
		if n == 0 {
			return 0, io.EOF
		}
	}
	return n, nil
}
