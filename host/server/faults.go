package server

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ctxgate/ctxgate/host"
)

// callFailed turns a failed gate call into its answer, and logs the calls
// that point at a fault rather than at the input: a trap (the instance is
// replaced) or an error the host does not know. Those get an id, logged and
// sent in X-Ctxgate-Decision-Id, so a client's report of a 500 can be
// matched to the log line. Bad input, timeouts and a closing gate are
// answered and counted as before, not logged.
func (s *Server) callFailed(r *http.Request, op string, a *active, n int, err error) *apiError {
	e := fromCallError(err)
	var ge *host.GateError
	if errors.As(err, &ge) || errors.Is(err, host.ErrTimeout) || errors.Is(err, host.ErrClosed) {
		return e
	}
	e.ID = s.ids.issue(idFault)
	pool := "fast"
	if a.large != nil && n > a.largeFrom {
		pool = "large"
	}
	if ok, suppressed := s.faultLog.allow(time.Now()); ok {
		msg := err.Error()
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i] // a trap's wasm stack trace follows
		}
		attrs := []any{"id", e.ID, "op", op, "path", r.URL.Path, "input_bytes", n, "pool", pool,
			"policy", a.ref.label(), "error", msg}
		if suppressed > 0 {
			attrs = append(attrs, "suppressed_since_last", suppressed)
		}
		s.log.Error("gate call failed: "+faultKind(err), attrs...)
	}
	return e
}

func faultKind(err error) string {
	if errors.Is(err, host.ErrTrap) {
		return "the module trapped; the instance was replaced"
	}
	return "internal error"
}

// rateLimit lets one event through per interval and counts the rest, so a
// flood of faults costs one log line a second, not one each.
type rateLimit struct {
	mu         sync.Mutex
	interval   time.Duration
	last       time.Time
	suppressed int
}

func (l *rateLimit) allow(now time.Time) (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < l.interval {
		l.suppressed++
		return false, 0
	}
	l.last, suppressed, l.suppressed = now, l.suppressed, 0
	return true, suppressed
}
