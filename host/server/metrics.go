package server

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/ctxgate/ctxgate/host"
	"github.com/ctxgate/ctxgate/internal/safefile"
)

// Every metric is ctxgate_*, in Prometheus base units. docs/server.md lists
// them, and examples/serve/prometheus-rules.yaml records the sufficient-context gateway's names
// (sufficient_context_score_avg, _insufficient_count, ...) from them for
// dashboards that use those.
var (
	actionNames  = []string{"inject", "caveat", "fallback", "refuse"}
	levelNames   = []string{"sufficient", "partial", "insufficient"}
	refusalNames = []string{"hard", "soft"}
	// upstreamOutcomes: an upstream exchange by what came back (its status
	// class; 429 on its own, the rate limit a client backs off from), or
	// how it failed before any status: timeout, error.
	upstreamOutcomes = []string{"1xx", "2xx", "3xx", "4xx", "429", "5xx", "timeout", "error"}
	// poolNames: the fast pool and the large-request lane (lane.go).
	poolNames = []string{"fast", "large"}
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
	gapsPageBuilds  prometheus.Counter
	feedback        *prometheus.CounterVec // {rating}
	reloads         *prometheus.CounterVec // {result}
	// policyFileRefused: policy or trust files refused unread {reason}.
	policyFileRefused *prometheus.CounterVec
	policyStateErrors prometheus.Counter
	upstream          *prometheus.HistogramVec // {route, outcome}
	upstreamCuts      *prometheus.CounterVec   // {where}: stream, body
	largeRequests     prometheus.Counter
	gateway           *prometheus.CounterVec // {route, action} incl. skip, error
	requests          *prometheus.CounterVec // {route, code}: every HTTP request by its status class
	policyInfo        *prometheus.GaugeVec

	// Pool counters survive a reload: a retired gate's totals are added
	// here, per pool (fast, large).
	mu                  sync.Mutex
	baseCreated, baseDi [2]uint64
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	f := promauto.With(m.reg) // each Server its own registry: tests and several servers in one process do not collide
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.score = f.NewHistogram(prometheus.HistogramOpts{Name: "ctxgate_decision_confidence",
		Help:    "The decision's confidence (for the sufficient-context policy, the sufficiency score), in [0,1].",
		Buckets: prometheus.LinearBuckets(0.1, 0.1, 10)})
	m.latency = f.NewHistogram(prometheus.HistogramOpts{Name: "ctxgate_gate_duration_seconds",
		Help:    "Time of one gate call (Wasm instance acquired, request decoded, decided, decision encoded).",
		Buckets: prometheus.ExponentialBuckets(10e-6, 2, 16)})
	dec := f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_decisions_total",
		Help: "Decisions by action and sufficiency level."}, []string{"action", "level"})
	for i, a := range actionNames {
		for j, l := range levelNames {
			m.decisions[i][j] = dec.WithLabelValues(a, l)
		}
	}
	m.other = dec
	ref := f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_refusals_total",
		Help: "Refusals: hard (the gate declined, the model was not called) and soft (the model answered with the refusal line)."}, []string{"type"})
	for i, r := range refusalNames {
		m.refusals[i] = ref.WithLabelValues(r)
	}
	m.answerChecks = f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_answer_checks_total",
		Help: "Upstream answers checked (result: ok, soft_refusal, unknown_citations, uncited_sentences, skipped_stream, skipped_no_content, skipped_oversize, skipped_not_json, error)."}, []string{"result"})
	m.gapEvents = f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_gap_events_total",
		Help: "Knowledge-gap events appended to the gap log as complete, synced lines, by kind."}, []string{"kind"})
	m.feedback = f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_feedback_total",
		Help: "Feedback received, by rating."}, []string{"rating"})
	m.errors = f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_errors_total",
		Help: "Error answers, by error code."}, []string{"code"})
	m.gapLogErrors = f.NewCounter(prometheus.CounterOpts{Name: "ctxgate_gap_log_errors_total",
		Help: "Gap events that could not be written whole or synced (a partial line is cut off, never left for the next event to land on)."})
	m.gapLogRotations = f.NewCounter(prometheus.CounterOpts{Name: "ctxgate_gap_log_rotations_total",
		Help: "Gap log files rotated for reaching gap_log_max_bytes."})
	m.gapsPageBuilds = f.NewCounter(prometheus.CounterOpts{Name: "ctxgate_gaps_page_builds_total",
		Help: "GET /gaps pages built from the gap log: a page is built again only when the log changed, or for other query parameters."})
	m.reloads = f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_policy_reloads_total",
		Help: "Policy loads and reloads, by result (ok, error, rollback)."}, []string{"result"})
	m.policyFileRefused = f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_policy_file_refused_total",
		Help: "Policy and trust files refused unread, by reason: not_regular (a FIFO, a device, a directory, a socket) or too_large (over 4 MiB). Each is also a failed load."}, []string{"reason"})
	m.policyStateErrors = f.NewCounter(prometheus.CounterOpts{Name: "ctxgate_policy_state_errors_total",
		Help: "Signed policies loaded whose version could not be recorded in the policy state file (a restart would not know it)."})
	for _, r := range []string{safefile.NotRegular, safefile.TooLarge} {
		m.policyFileRefused.WithLabelValues(r) // zeros rather than missing series
	}
	m.upstream = f.NewHistogramVec(prometheus.HistogramOpts{Name: "ctxgate_upstream_seconds",
		Help: "Gateway mode: time until the upstream's response headers, by route (chat_completions, responses, passthrough) " +
			"and outcome (the status class 1xx..5xx with 429 apart, or timeout, error: no answer).",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}, []string{"route", "outcome"})
	m.upstreamCuts = f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_upstream_cut_total",
		Help: "Gateway mode: upstream answers cut after their headers (stalled past upstream_idle_timeout or write_timeout, or broken), by where: stream (ended with an error event and [DONE]), body (502/504, or the response aborted)."}, []string{"where"})
	m.largeRequests = f.NewCounter(prometheus.CounterOpts{Name: "ctxgate_large_requests_total",
		Help: "Gate calls over large_body_bytes, run in the large-request lane (termination checks, at most large_concurrency at once)."})
	m.gateway = f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_gateway_requests_total",
		Help: "Gated gateway requests by route (chat_completions, responses) and what the gate did (inject, caveat, fallback, refuse, skip, error)."}, []string{"route", "action"})
	m.requests = f.NewCounterVec(prometheus.CounterOpts{Name: "ctxgate_http_requests_total",
		Help: "HTTP requests served, by route and status class (2xx, 4xx, ...; aborted: the response was cut off)."}, []string{"route", "code"})
	f.NewGaugeFunc(prometheus.GaugeOpts{Name: "ctxgate_inflight_body_bytes",
		Help: "Bytes of request bodies and upstream answers held in memory now (bounded by max_inflight_body_bytes)."},
		func() float64 { return float64(s.bodies.inUse()) })
	m.policyInfo = f.NewGaugeVec(prometheus.GaugeOpts{Name: "ctxgate_policy_info",
		Help: "The active policy (value 1)."}, []string{"name", "version", "sha256"})

	// Each pool's gauges read the active policy's pools at scrape time.
	// in_use and idle partition the live instances, so summing over state
	// (and pool) counts each instance once.
	pool := func(i int, pick func(st host.Stats) float64) func() float64 {
		return func() float64 {
			a := s.cur.Load()
			if a == nil {
				return 0
			}
			if st, ok := a.poolStats(i); ok {
				return pick(st)
			}
			return 0
		}
	}
	for i, name := range poolNames {
		l := prometheus.Labels{"pool": name}
		f.NewGaugeFunc(prometheus.GaugeOpts{Name: "ctxgate_pool_size", ConstLabels: l,
			Help: "The most Wasm instances a pool may hold (fast: pool_size; large: the large-request lane's large_concurrency)."},
			pool(i, func(st host.Stats) float64 { return float64(st.Size) }))
		for _, state := range []struct {
			name string
			pick func(host.Stats) float64
		}{
			{"in_use", func(st host.Stats) float64 { return float64(st.Live - idleOf(st)) }},
			{"idle", func(st host.Stats) float64 { return float64(idleOf(st)) }},
		} {
			f.NewGaugeFunc(prometheus.GaugeOpts{Name: "ctxgate_pool_instances",
				Help:        "Live Wasm instances of the active policy's pools, by pool and state (in_use + idle = live).",
				ConstLabels: prometheus.Labels{"pool": name, "state": state.name}}, pool(i, state.pick))
		}
		// Totals outlive a pool: base holds what the pools already
		// replaced counted (under m.mu), the active pool adds its own.
		total := func(base *[2]uint64, pick func(host.Stats) float64) func() float64 {
			cur := pool(i, pick)
			return func() float64 {
				m.mu.Lock()
				defer m.mu.Unlock()
				return float64(base[i]) + cur()
			}
		}
		f.NewCounterFunc(prometheus.CounterOpts{Name: "ctxgate_pool_instances_created_total", ConstLabels: l,
			Help: "Wasm instances made, replacements and every policy's pools included."},
			total(&m.baseCreated, func(st host.Stats) float64 { return float64(st.Created) }))
		f.NewCounterFunc(prometheus.CounterOpts{Name: "ctxgate_pool_instances_discarded_total", ConstLabels: l,
			Help: "Wasm instances closed after a trap or a timeout."},
			total(&m.baseDi, func(st host.Stats) float64 { return float64(st.Discarded) }))
	}
	return m
}

// idleOf is a pool's idle instances, at most its live ones: the pool reads
// its counters one by one while calls run, so InUse and Idle may briefly
// count an instance twice; Live is exact, and the gauges split it.
func idleOf(st host.Stats) int {
	return max(0, min(st.Idle, st.Live))
}

// poolStats reads pool i (0 fast, 1 the large-request lane) of a; false
// when a has no such pool (the native core, a server without a lane).
func (a *active) poolStats(i int) (host.Stats, bool) {
	switch {
	case i == 0 && a.stats != nil:
		return a.stats(), true
	case i == 1 && a.largeStats != nil:
		return a.largeStats(), true
	}
	return host.Stats{}, false
}

// statusClass is the label of an HTTP status: "2xx", "4xx", ..., with 429
// on its own.
func statusClass(code int) string {
	if code == http.StatusTooManyRequests {
		return "429"
	}
	if code < 100 || code > 599 {
		return "error"
	}
	return [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}[code/100-1]
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
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range poolNames {
		if st, ok := a.poolStats(i); ok {
			m.baseCreated[i] += st.Created
			m.baseDi[i] += st.Discarded
		}
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
