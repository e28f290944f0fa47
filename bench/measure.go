package bench

import (
	"context"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxgate/ctxgate/host"
)

// Subject is one way of deciding a request: natively or through a module.
type Subject struct {
	Name string
	Eval host.Evaluator
}

// Latency is the distribution of one subject's per-decision times.
type Latency struct {
	Samples  int
	P50, P99 time.Duration
}

// Percentile of sorted durations, nearest rank (p in 0..100).
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted))+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

// MeasureLatency times n decisions of each subject over w's requests. The
// subjects take turns sample by sample, so load from anything else on the
// machine falls on all of them alike and their ratios stay meaningful.
// Every subject first decides each request once (warm-up, and a check that
// it decides at all: the first error is returned).
//
// A call's time depended on what ran just before it: in a fixed order, with
// each subject's call straight after another subject's, the same module
// bytes measured 6-40% slower in one column than in another (not the CPU
// caches: throwing 4 MB out of them between calls barely moves a warm call) (docs/performance.md, "Reading the tables"). So each sample
// visits the subjects in a shuffled order (seeded, so runs repeat), and
// each subject decides the request before this one, untimed, just before
// its timed call: warm, as a server calling one module request after
// request is, but never timing a request it has just seen (its branch
// history would flatter it).
func MeasureLatency(ctx context.Context, subjects []Subject, w Workload, n int) ([]Latency, error) {
	for _, s := range subjects {
		for _, r := range w.Requests {
			if _, err := s.Eval.Evaluate(ctx, r); err != nil {
				return nil, &SubjectError{Subject: s.Name, Workload: w.Name, Err: err}
			}
		}
	}
	times := make([][]time.Duration, len(subjects))
	for i := range times {
		times[i] = make([]time.Duration, 0, n)
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(len(subjects))))
	order := make([]int, len(subjects))
	for i := range order {
		order[i] = i
	}
	m := len(w.Requests)
	for k := 0; k < n; k++ {
		req, before := w.Requests[k%m], w.Requests[(k+m-1)%m]
		rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		for _, i := range order {
			s := subjects[i]
			if _, err := s.Eval.Evaluate(ctx, before); err != nil {
				return nil, &SubjectError{Subject: s.Name, Workload: w.Name, Err: err}
			}
			start := time.Now()
			_, err := s.Eval.Evaluate(ctx, req)
			d := time.Since(start)
			if err != nil {
				return nil, &SubjectError{Subject: s.Name, Workload: w.Name, Err: err}
			}
			times[i] = append(times[i], d)
		}
	}
	out := make([]Latency, len(subjects))
	for i, t := range times {
		sort.Slice(t, func(a, b int) bool { return t[a] < t[b] })
		out[i] = Latency{Samples: len(t), P50: Percentile(t, 50), P99: Percentile(t, 99)}
	}
	return out, nil
}

// SubjectError names what failed.
type SubjectError struct {
	Subject, Workload string
	Err               error
}

func (e *SubjectError) Error() string { return e.Subject + " on " + e.Workload + ": " + e.Err.Error() }
func (e *SubjectError) Unwrap() error { return e.Err }

// Throughput runs g goroutines deciding w's requests for d and returns
// decisions per second.
func Throughput(ctx context.Context, ev host.Evaluator, w Workload, g int, d time.Duration) (float64, error) {
	var done atomic.Int64
	var firstErr error
	var once sync.Once
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for k := i; time.Now().Before(deadline); k += g {
				if _, err := ev.Evaluate(ctx, w.Requests[k%len(w.Requests)]); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				done.Add(1)
			}
		}(i)
	}
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	return float64(done.Load()) / time.Since(start).Seconds(), nil
}

// Median runs f n times and returns the median duration (cold-start steps,
// where each run builds something new).
func Median(n int, f func() (time.Duration, error)) (time.Duration, error) {
	ds := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		d, err := f()
		if err != nil {
			return 0, err
		}
		ds = append(ds, d)
	}
	sort.Slice(ds, func(a, b int) bool { return ds[a] < ds[b] })
	return ds[len(ds)/2], nil
}
