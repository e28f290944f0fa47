package server

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metric names start from the sufficient-context gateway's (sufficient_context_*), in Prometheus
// base units; the server's own health is ctxgate_*. docs/server.md lists
// them and maps the seed's names (score_avg, insufficient_count, ...) onto
// queries over these.
var (
	actionNames  = []string{"inject", "caveat", "fallback", "refuse"}
	levelNames   = []string{"sufficient", "partial", "insufficient"}
	refusalNames = []string{"hard", "soft"}
)

type metrics struct {
	reg *prometheus.Registry

	score     prometheus.Histogram
	latency   prometheus.Histogram
	decisions [4][3]prometheus.Counter // [action][level], resolved up front: no map lookup per request
	refusals  [2]prometheus.Counter    // hard, soft
	other     *prometheus.CounterVec   // decisions with an action or level outside the known set

	errors          *prometheus.CounterVec // {code}
	answerChecks    *prometheus.CounterVec // {result}
	gapEvents       *prometheus.CounterVec // {kind}
	gapLogErrors    prometheus.Counter
	gapLogRotations prometheus.Counter
	feedback        *prometheus.CounterVec // {rating}
	reloads         *prometheus.CounterVec // {result}
	upstream        *prometheus.HistogramVec
	upstreamCuts    *prometheus.CounterVec // {where}: stream, body
	largeRequests   prometheus.Counter
	gateway         *prometheus.CounterVec // {action} incl. skip, error
	policyInfo      *prometheus.GaugeVec

	// Pool counters survive a reload: a retired gate's totals are added here.
	mu                  sync.Mutex
	baseCreated, baseDi uint64
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	f := promauto.With(m.reg) // each Server its own registry: tests and several servers in one process do not collide
	m.score = f.NewHistogram(prometheus.HistogramOpts{Name: "sufficient_context_score",
		Help:    "The decision's confidence (for the sufficient-context policy, the sufficiency score), in [0,1].",
		Buckets: prometheus.LinearBuckets(0.1, 0.1, 10)})
	m.latency = f.NewHistogram(prometheus.HistogramOpts{Name: "sufficient_context_latency_seconds",
		Help:    "Time of one gate call (Wasm instance acquired, request decoded, decided, decision encoded).",
		Buckets: prometheus.ExponentialBuckets(10e-6, 2, 16)})
	dec := f.NewCounterVec(prometheus.CounterOpts{Name: "sufficient_context_decisions_total",
		Help: "Decisions by action and sufficiency level."}, []string{"action", "level"})
	for i, a := range actionNames {
		for j, l := range levelNames {
			m.decisions[i][j] = dec.WithLabelValues(a, l)
		}
	}
	m.other = dec
	ref := f.NewCounterVec(prometheus.CounterOpts{Name: "sufficient_context_refusals_total",
		Help: "Refusals: hard (the gate declined, the model was not called) and soft (the model answered with the refusal line)."}, []string{"type"})
	for i, r := range refusalNames {
		m.refusals[i] = ref.WithLabelValues(r)
	}
	m.answerChecks = f.NewCounterVec(prometheus.CounterOpts{Name: "sufficient_context_answer_checks_total",
		Help: "Upstream answers checked (result: ok, soft_refusal, unknown_citations, uncited_sentences, skipped_stream, skipped_no_content, skipped_oversize, skipped_not_json, error)."}, []string{"result"})
	m.gapEvents = f.NewCounterVec(prometheus.CounterOpts{Name: "sufficient_context_gap_events_total",
		Help: "Knowledge-gap events appended to the gap log as complete, synced lines, by kind."}, []string{"kind"})
	m.feedback = f.NewCounterVec(prometheus.CounterOpts{Name: "sufficient_context_feedback_total",
		Help: "Feedback received, by rating."}, []string{"rating"})
	m.errors = f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_errors_total",
		Help: "Error answers, by error code."}, []string{"code"})
	m.gapLogErrors = f.NewCounter(prometheus.CounterOpts{Name: "ctxgate_gap_log_errors_total",
		Help: "Gap events that could not be written whole or synced (a partial line is cut off, never left for the next event to land on)."})
	m.gapLogRotations = f.NewCounter(prometheus.CounterOpts{Name: "ctxgate_gap_log_rotations_total",
		Help: "Gap log files rotated for reaching gap_log_max_bytes."})
	m.reloads = f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_policy_reloads_total",
		Help: "Policy loads and reloads, by result (ok, error)."}, []string{"result"})
	m.upstream = f.NewHistogramVec(prometheus.HistogramOpts{Name: "ctxgate_upstream_seconds",
		Help:    "Gateway mode: time until the upstream's response headers, by outcome (ok, error).",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}, []string{"outcome"})
	m.upstreamCuts = f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_upstream_cut_total",
		Help: "Gateway mode: upstream answers cut after their headers (stalled past upstream_idle_timeout or write_timeout, or broken), by where: stream (ended with an error event and [DONE]), body (502/504, or the response aborted)."}, []string{"where"})
	m.largeRequests = f.NewCounter(prometheus.CounterOpts{Name: "ctxgate_large_requests_total",
		Help: "Gate calls over large_body_bytes, run in the large-request lane (termination checks, at most large_concurrency at once)."})
	m.gateway = f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_gateway_requests_total",
		Help: "Gateway chat requests by what the gate did (inject, caveat, fallback, refuse, skip, error)."}, []string{"action"})
	m.policyInfo = f.NewGaugeVec(prometheus.GaugeOpts{Name: "ctxgate_policy_info",
		Help: "The active policy (value 1)."}, []string{"name", "version", "sha256"})

	stat := func(pick func(st poolStats) float64) func() float64 {
		return func() float64 {
			a := s.cur.Load()
			if a == nil || a.stats == nil {
				return 0
			}
			st := a.stats()
			return pick(poolStats{st.Size, st.Live, st.InUse, st.Idle, st.Created, st.Discarded})
		}
	}
	f.NewGaugeFunc(prometheus.GaugeOpts{Name: "ctxgate_pool_size",
		Help: "The most Wasm instances the pool may hold."}, stat(func(p poolStats) float64 { return float64(p.size) }))
	for _, st := range []struct {
		name string
		pick func(poolStats) float64
	}{
		{"live", func(p poolStats) float64 { return float64(p.live) }},
		{"in_use", func(p poolStats) float64 { return float64(p.inUse) }},
		{"idle", func(p poolStats) float64 { return float64(p.idle) }},
	} {
		f.NewGaugeFunc(prometheus.GaugeOpts{Name: "ctxgate_pool_instances",
			Help: "Wasm instances of the active policy's pool, by state.", ConstLabels: prometheus.Labels{"state": st.name}}, stat(st.pick))
	}
	// Totals outlive a pool: base holds what the pools already replaced
	// counted (under m.mu), the active pool adds its own.
	total := func(base *uint64, pick func(poolStats) float64) func() float64 {
		return func() float64 {
			m.mu.Lock()
			defer m.mu.Unlock()
			return float64(*base) + stat(pick)()
		}
	}
	f.NewCounterFunc(prometheus.CounterOpts{Name: "ctxgate_pool_instances_created_total",
		Help: "Wasm instances made, replacements and every policy's pools included."},
		total(&m.baseCreated, func(p poolStats) float64 { return float64(p.created) }))
	f.NewCounterFunc(prometheus.CounterOpts{Name: "ctxgate_pool_instances_discarded_total",
		Help: "Wasm instances closed after a trap or a timeout."},
		total(&m.baseDi, func(p poolStats) float64 { return float64(p.discarded) }))
	return m
}

type poolStats struct {
	size, live, inUse, idle int
	created, discarded      uint64
}

// observe counts one decision.
func (m *metrics) observe(d *decisionView, seconds float64) {
	m.latency.Observe(seconds)
	m.score.Observe(d.confidence())
	ai, li := indexOf(actionNames, d.Action), indexOf(levelNames, d.Level)
	if ai >= 0 && li >= 0 {
		m.decisions[ai][li].Inc()
	} else {
		m.other.WithLabelValues(d.Action, d.Level).Inc()
	}
	if d.Refusal != nil && d.Refusal.Type == "hard" {
		m.refusals[0].Inc()
	}
}

func (m *metrics) softRefusal() { m.refusals[1].Inc() }

func (m *metrics) setPolicy(r policyRef) {
	m.policyInfo.Reset()
	m.policyInfo.WithLabelValues(r.Name, r.Version, r.SHA256).Set(1)
}

// retirePool folds a replaced gate's instance counters into the totals.
// Its instances close when its last call ends; those closings are not
// discards (no trap), so they are not counted.
func (m *metrics) retirePool(a *active) {
	if a.stats == nil {
		return
	}
	st := a.stats()
	m.mu.Lock()
	m.baseCreated += st.Created
	m.baseDi += st.Discarded
	m.mu.Unlock()
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
