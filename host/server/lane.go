package server

import (
	"context"
	"runtime"

	"github.com/ctxgate/ctxgate/host"
)

// Large requests run in a lane of their own: a second pool of instances,
// with wazero's termination checks and at most LargeConcurrency calls at
// once (default GOMAXPROCS-1).
//
// Why: a Wasm call compiled without termination checks cannot be preempted
// by the Go scheduler. It holds its thread and P until it returns, and a
// garbage collection that must stop the world waits for it, so one long
// call stalls every goroutine in the process, /healthz included. With the
// checks, compiled code calls into Go at every loop header: the call can be
// preempted there (the collector proceeds) and is stopped at its deadline.
// They cost 4-8x on the calls they cover (docs/performance.md),
// so ordinary requests keep the fast pool and only requests over
// LargeBodyBytes, where the cost of a request can grow long, pay it. The
// concurrency bound leaves a P free for everything else even when the lane
// is full: requests over the bound wait for a lane instance (bounded by the
// gate deadline, then 503) and never take one from the fast pool.
func (s *Server) buildLane(ctx context.Context, a *active, l *loaded) error {
	if s.opts.Native || s.opts.LargeBodyBytes <= 0 {
		return nil
	}
	interrupt := host.InterruptAlways
	if s.opts.Interrupt == host.InterruptNever {
		interrupt = host.InterruptNever // the operator's explicit choice
	}
	o := s.gateOptions(l, s.opts.LargeConcurrency, interrupt)
	o.Prewarm = -1 // the policy is already checked by the fast pool's gate
	g, err := host.New(ctx, o)
	if err != nil {
		return err
	}
	a.large, a.largeStats, a.largeFrom = g, g.Stats, int(s.opts.LargeBodyBytes)
	return nil
}

// gateOptions are the host.Options of one of the policy's pools.
func (s *Server) gateOptions(l *loaded, poolSize int, interrupt host.Interrupt) host.Options {
	return host.Options{
		Module: s.opts.Module, Wasm: s.opts.Wasm,
		Policy: l.policy, TrustKeys: l.trust, TrustMode: s.opts.Policy.TrustMode,
		PoolSize: poolSize, CacheDir: s.opts.CacheDir, Logger: s.log, MaxPages: s.opts.MaxPages,
		Interrupt:    interrupt,
		VectorMetric: s.opts.VectorMetric, RerankScale: s.opts.RerankScale,
		MaxInputBytes: int(min(s.opts.MaxBodyBytes, host.DefaultMaxInputBytes)),
		// The server bounds each call with the request's gate deadline;
		// the host's own timeout would also bound prewarming.
		Timeout: -1,
	}
}

// evaluator picks the pool for an input of n bytes.
func (s *Server) evaluator(a *active, n int) host.Evaluator {
	if a.large != nil && n > a.largeFrom {
		s.metrics.largeRequests.Inc()
		return a.large
	}
	return a.ev
}

// defaultLargeConcurrency leaves one P for everything but the lane.
func defaultLargeConcurrency() int {
	return max(1, runtime.GOMAXPROCS(0)-1)
}
