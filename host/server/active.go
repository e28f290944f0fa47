package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/host"
	"github.com/ctxgate/ctxgate/internal/safefile"
)

// active is one loaded policy and the gate that runs it. Requests hold a
// reference while they use it; a reload swaps the server's pointer and the
// old gate is closed when its last reference is released, so in-flight calls
// finish on the policy they started with.
type active struct {
	ev    host.Evaluator
	stats func() host.Stats // nil for the native evaluator
	// large runs requests over largeFrom bytes (lane.go); nil: none.
	large      host.Evaluator
	largeStats func() host.Stats
	largeFrom  int
	ref        policyRef
	// maxRequest is the policy's max_request_bytes (0: unknown): the gate
	// API reads no more of a body.
	maxRequest int
	document   []byte // the policy JSON (or bundle) as handed to the gate
	source     string
	digest     [32]byte // sha256 of document and trust keys: "did anything change?"
	loadedAt   time.Time

	refs    atomic.Int64
	retired atomic.Bool
	closed  sync.Once
	done    chan struct{} // closed once the gate is closed
}

type policyRef struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

// label is name@version, as the x-ctxgate-policy header and the Envoy
// filter spell it.
func (r policyRef) label() string {
	if r.Version == "" {
		return r.Name
	}
	return r.Name + "@" + r.Version
}

// acquire returns the current policy with a reference held, or nil when none
// is loaded. The second load closes the race with a concurrent swap: a
// reference taken on a pointer that is no longer current is given back, so a
// retired gate never gains a user after its retirement was decided.
func (s *Server) acquire() *active {
	for {
		a := s.cur.Load()
		if a == nil {
			return nil
		}
		a.refs.Add(1)
		if s.cur.Load() == a {
			return a
		}
		a.release()
	}
}

func (a *active) release() {
	if a.refs.Add(-1) == 0 && a.retired.Load() {
		a.close()
	}
}

// retire marks a as replaced; it closes now if no request holds it.
func (a *active) retire() {
	a.retired.Store(true)
	if a.refs.Load() == 0 {
		a.close()
	}
}

func (a *active) close() {
	a.closed.Do(func() {
		a.ev.Close(context.Background())
		if a.large != nil {
			a.large.Close(context.Background())
		}
		close(a.done)
	})
}

// build makes a gate for l. host.New prewarms one instance, which loads the
// policy inside the module: a bad policy (or a bundle the trust keys do not
// verify) fails here and never reaches a request.
func (s *Server) build(ctx context.Context, l *loaded) (*active, error) {
	var ev host.Evaluator
	a := &active{document: l.policy, source: l.source, loadedAt: time.Now().UTC(), done: make(chan struct{})}
	if s.opts.Native {
		// The same bundle rules the module applies in its sandbox.
		n, err := host.NewNativeOptions(host.Options{Policy: l.policy, TrustKeys: l.trust, TrustMode: s.opts.Policy.TrustMode,
			VectorMetric: s.opts.VectorMetric, RerankScale: s.opts.RerankScale})
		if err != nil {
			return nil, err
		}
		ev = n
	} else {
		g, err := host.New(ctx, s.gateOptions(l, s.opts.PoolSize, s.opts.Interrupt))
		if err != nil {
			return nil, err
		}
		ev, a.stats = g, g.Stats
	}
	desc, err := ev.Describe(ctx)
	if err != nil {
		ev.Close(ctx)
		return nil, err
	}
	var d struct {
		Policy policyRef `json:"policy"`
	}
	if err := json.Unmarshal(desc, &d); err != nil {
		ev.Close(ctx)
		return nil, errors.New("describe: " + err.Error())
	}
	a.ev, a.ref = ev, d.Policy
	a.maxRequest = requestLimit(l.policy)
	a.digest = l.digest()
	if err := s.buildLane(ctx, a, l); err != nil {
		ev.Close(ctx)
		return nil, err
	}
	return a, nil
}

// requestLimit is a policy's max_request_bytes, read natively from the
// document the gate has just loaded (a bundle's signed policy; nil: the
// built-in default), or 0 when it cannot be read.
func requestLimit(doc []byte) int {
	if len(doc) > 0 {
		if bundle.IsBundle(doc) {
			b, err := bundle.Parse(doc)
			if err != nil {
				return 0
			}
			doc = b.Policy
		}
		p, err := gate.DecodePolicy(doc)
		if err != nil {
			return 0
		}
		if p.Limits.MaxRequestBytes > 0 {
			return p.Limits.MaxRequestBytes
		}
	}
	return gate.DefaultLimits().MaxRequestBytes
}

// Reload re-reads the policy source and, if anything changed, swaps in a new
// gate atomically: read, verify (the new gate's first instance loads the
// policy inside the module), then one pointer store. A policy that fails to
// load or validate keeps the old one; the error says why (and is logged and
// counted). A version older than the running signed policy, or than
// Options.MinVersion, is refused as a rollback.
func (s *Server) Reload(ctx context.Context) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	err := s.reloadLocked(ctx)
	var rb *rollbackError
	var refused *safefile.Error
	if errors.As(err, &refused) {
		s.metrics.policyFileRefused.WithLabelValues(refused.Reason).Inc()
	}
	switch {
	case err == nil:
	case errors.As(err, &rb):
		s.metrics.reloads.WithLabelValues("rollback").Inc()
		s.log.Error("policy reload refused: older than allowed (rollback); keeping the current policy",
			"policy", rb.ref.label(), "sha256", rb.ref.SHA256, "running", rb.running, "min_version", rb.min, "error", err.Error())
	default:
		s.metrics.reloads.WithLabelValues("error").Inc()
		if s.cur.Load() == nil {
			// The first load (or every load so far) failed: there is no
			// policy to keep, and calling it a reload misleads.
			s.log.Error("policy load failed; no policy is loaded", "error", err.Error())
		} else {
			s.log.Error("policy reload failed; keeping the current policy", "error", err.Error())
		}
	}
	return err
}

// Retrying a policy read: a file overwritten in place is empty, then
// partial (bad JSON, or a bundle whose signature does not verify) for a
// moment. A failure is final once the same bytes fail twice across a
// backoff, or after reloadAttempts reads (about 1.5 s in all); an empty file
// is retried until then. A file refused for its type or size (a FIFO, a
// device, over safefile.MaxPolicyBytes) is final at once: no writer leaves
// one mid-write.
const (
	reloadAttempts = 6
	reloadBackoff  = 50 * time.Millisecond // doubled after each attempt
)

func (s *Server) reloadLocked(ctx context.Context) error {
	var last [32]byte
	backoff := reloadBackoff
	for attempt := 1; ; attempt++ {
		if s.closing.Load() {
			return errors.New("server is shutting down")
		}
		a, print, err := s.loadOnce(ctx)
		if err == nil {
			if a != nil {
				s.swap(a, attempt)
			}
			return nil
		}
		var rb *rollbackError
		var empty emptyPolicyError
		var refused *safefile.Error
		settled := attempt > 1 && print == last && !errors.As(err, &empty)
		if errors.As(err, &rb) || errors.As(err, &refused) || settled || attempt == reloadAttempts {
			return err
		}
		last = print
		s.log.Debug("policy read failed; retrying in case the file is being written", "attempt", attempt, "error", err.Error())
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return err
		}
		backoff *= 2
	}
}

// loadOnce reads the source and builds a gate for it. It returns a nil
// active (and no error) when nothing changed, and the fingerprint of what it
// read (the bytes, or the error) so a retry can tell a file that is still
// changing from one that is settled and bad.
func (s *Server) loadOnce(ctx context.Context) (*active, [32]byte, error) {
	// The stamps are taken before the read: a change during or after it is
	// seen by the next poll (at worst one reload that finds nothing new).
	s.watchFiles(s.opts.Policy.files())
	l, err := s.opts.Policy.Load()
	if err != nil {
		return nil, sha256.Sum256([]byte(err.Error())), err
	}
	print := l.digest()
	cur := s.cur.Load()
	if cur != nil && print == cur.digest {
		return nil, print, nil
	}
	a, err := s.build(ctx, l)
	if err != nil {
		return nil, print, err
	}
	if err := s.checkVersion(a, cur); err != nil {
		a.close()
		return nil, print, err
	}
	return a, print, nil
}

// swap makes a the active policy.
func (s *Server) swap(a *active, attempts int) {
	s.raiseState(a) // before the swap: no request sees a version a crash could forget
	old := s.cur.Swap(a)
	s.metrics.setPolicy(a.ref)
	s.metrics.reloads.WithLabelValues("ok").Inc()
	attrs := []any{"policy", a.ref.label(), "sha256", a.ref.SHA256, "source", a.source}
	if attempts > 1 {
		attrs = append(attrs, "attempts", attempts)
	}
	if old != nil {
		s.metrics.retirePool(old)
		old.retire()
		s.log.Info("policy reloaded", append(attrs, "previous", old.ref.SHA256)...)
	} else {
		s.log.Info("policy loaded", attrs...)
	}
}

// rollbackError is a policy refused for its version.
type rollbackError struct {
	ref          policyRef
	running, min string
	msg          string
}

func (e *rollbackError) Error() string { return e.msg }

// checkVersion refuses a policy older than Options.MinVersion, or, when the
// policies are signed (trust keys are set), older than the running one or
// than the highest recorded in the policy state: a validly signed but
// outdated bundle must not be replayable, across restarts too. An unsigned
// policy may go back in version: whoever can write it can write anything.
// Versions compare as bundle.CompareVersions does (verify --min-version).
func (s *Server) checkVersion(a, cur *active) error {
	v := a.ref.Version
	refuse := func(running, min, msg string) error {
		return &rollbackError{ref: a.ref, running: running, min: min, msg: msg}
	}
	if min := s.opts.MinVersion; min != "" {
		if v == "" {
			return refuse("", min, "policy "+a.ref.Name+" has no version, and min_version "+min+" is set")
		}
		if bundle.CompareVersions(v, min) < 0 {
			return refuse("", min, "policy version "+v+" is older than min_version "+min)
		}
	}
	if cur != nil && len(s.opts.Policy.TrustFiles) > 0 && cur.ref.Version != "" {
		running := cur.ref.Version
		if v == "" {
			return refuse(running, s.opts.MinVersion, "policy "+a.ref.Name+" has no version; the running signed policy is version "+running)
		}
		if bundle.CompareVersions(v, running) < 0 {
			return refuse(running, s.opts.MinVersion, "policy version "+v+" is older than the running signed policy's "+running)
		}
	}
	if high := s.state.version(); high != "" {
		// The highest signed version ever loaded here, this run or an
		// earlier one: a restart does not reopen the door to an older one.
		how := "; to roll back deliberately, stop the server, remove " + strconv.Quote(s.state.path) + " and start it (docs/server.md, Rollback)"
		if v == "" {
			return refuse(high, s.opts.MinVersion, "policy "+a.ref.Name+" has no version; the highest signed version loaded is "+high+how)
		}
		if bundle.CompareVersions(v, high) < 0 {
			return refuse(high, s.opts.MinVersion, "policy version "+v+" is older than "+high+", the highest signed version loaded (policy state "+strconv.Quote(s.state.path)+")"+how)
		}
	}
	return nil
}
