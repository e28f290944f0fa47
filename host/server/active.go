package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxgate/ctxgate/host"
)

// active is one loaded policy and the gate that runs it. Requests hold a
// reference while they use it; a reload swaps the server's pointer and the
// old gate is closed when its last reference is released, so in-flight calls
// finish on the policy they started with.
type active struct {
	ev       host.Evaluator
	stats    func() host.Stats // nil for the native evaluator
	ref      policyRef
	document []byte // the policy JSON (or bundle) as handed to the gate
	source   string
	digest   [32]byte // sha256 of document and trust keys: "did anything change?"
	loadedAt time.Time

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
		n, err := host.NewNativeTrusted(l.policy, l.trust)
		if err != nil {
			return nil, err
		}
		ev = n
	} else {
		g, err := host.New(ctx, host.Options{
			Module: s.opts.Module, Wasm: s.opts.Wasm,
			Policy: l.policy, TrustKeys: l.trust,
			PoolSize: s.opts.PoolSize, CacheDir: s.opts.CacheDir, MaxPages: s.opts.MaxPages,
			Interrupt:     s.opts.Interrupt,
			MaxInputBytes: int(min(s.opts.MaxBodyBytes, host.DefaultMaxInputBytes)),
			// The server bounds each call with the request's gate deadline;
			// the host's own timeout would also bound prewarming.
			Timeout: -1,
		})
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
	h := sha256.New()
	h.Write(l.policy)
	h.Write([]byte{0})
	h.Write(l.trust)
	copy(a.digest[:], h.Sum(nil))
	return a, nil
}

// Reload re-reads the policy source and, if anything changed, swaps in a new
// gate atomically. A policy that fails to load or validate keeps the old one;
// the error says why (and is logged and counted).
func (s *Server) Reload(ctx context.Context) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	err := s.reloadLocked(ctx)
	if err != nil {
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

func (s *Server) reloadLocked(ctx context.Context) error {
	if s.closing.Load() {
		return errors.New("server is shutting down")
	}
	l, err := s.opts.Policy.Load()
	if err != nil {
		// Watch the files that should be there, so fixing them reloads.
		s.watchFiles(s.opts.Policy.files())
		return err
	}
	s.watchFiles(l.files)
	if cur := s.cur.Load(); cur != nil {
		h := sha256.New()
		h.Write(l.policy)
		h.Write([]byte{0})
		h.Write(l.trust)
		if string(h.Sum(nil)) == string(cur.digest[:]) {
			return nil
		}
	}
	a, err := s.build(ctx, l)
	if err != nil {
		return err
	}
	old := s.cur.Swap(a)
	s.metrics.setPolicy(a.ref)
	s.metrics.reloads.WithLabelValues("ok").Inc()
	if old != nil {
		s.metrics.retirePool(old)
		old.retire()
		s.log.Info("policy reloaded", "policy", a.ref.label(), "sha256", a.ref.SHA256, "source", a.source, "previous", old.ref.SHA256)
	} else {
		s.log.Info("policy loaded", "policy", a.ref.label(), "sha256", a.ref.SHA256, "source", a.source)
	}
	return nil
}
