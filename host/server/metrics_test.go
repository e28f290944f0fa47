package server

import (
	"bytes"
	"net/http"
	"path/filepath"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape fetches /metrics and parses it with Prometheus's text parser.
func scrape(t testing.TB, s *testServer) map[string]*dto.MetricFamily {
	t.Helper()
	r := do(t, http.MethodGet, s.url+"/metrics", nil)
	if r.status != 200 {
		t.Fatalf("/metrics: %d", r.status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// metricValue returns the value of the sample of family name whose labels
// include all of labels (counter, gauge, or a histogram's count).
func metricValue(t testing.TB, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no metric %s", name)
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.Label {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("no sample of %s with %v", name, labels)
	return 0
}

func TestMetrics(t *testing.T) {
	up := newUpstream(t, refusalLine(t, "default"))
	s := start(t, Options{PoolSize: 2, Upstream: up.ts.URL, GapLog: filepath.Join(t.TempDir(), "gaps.jsonl")})
	var confSum float64
	var ids []string
	for _, name := range []string{"inject", "inject", "caveat", "refuse_off_topic"} {
		r := post(t, s.url+"/v1/gate", request(t, "default", name))
		d := mustDecision(t, r.body)
		confSum += d.confidence()
		ids = append(ids, r.header.Get(HeaderDecisionID))
	}
	post(t, s.url+"/v1/gate", []byte(`{"query":`)) // bad_json
	post(t, s.url+"/v1/feedback", []byte(`{"decision_id":"`+ids[0]+`","rating":"down"}`))
	post(t, s.url+"/v1/feedback", []byte(`{"decision_id":"`+ids[1]+`","rating":"up"}`))
	chat, _ := chatFor(t, request(t, "default", "inject"), false)
	post(t, s.url+"/v1/chat/completions", chat) // a soft refusal from the upstream
	s.gaps.Flush()

	f := scrape(t, s)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"ctxgate_decisions_total", []string{"action", "inject", "level", "sufficient"}, 3},
		{"ctxgate_decisions_total", []string{"action", "caveat", "level", "partial"}, 1},
		{"ctxgate_decisions_total", []string{"action", "refuse", "level", "insufficient"}, 1},
		{"ctxgate_decisions_total", []string{"action", "fallback", "level", "sufficient"}, 0},
		{"ctxgate_refusals_total", []string{"type", "hard"}, 1},
		{"ctxgate_refusals_total", []string{"type", "soft"}, 1},
		{"ctxgate_gate_duration_seconds", nil, 5},
		{"ctxgate_decision_confidence", nil, 5},
		{"ctxgate_answer_checks_total", []string{"result", "soft_refusal"}, 1},
		{"ctxgate_gap_events_total", []string{"kind", "refusal_hard"}, 1},
		{"ctxgate_gap_events_total", []string{"kind", "refusal_soft"}, 1},
		{"ctxgate_gap_events_total", []string{"kind", "thumbs_down"}, 1},
		{"ctxgate_feedback_total", []string{"rating", "up"}, 1},
		{"ctxgate_feedback_total", []string{"rating", "down"}, 1},
		{"ctxgate_errors_total", []string{"code", "bad_json"}, 1},
		{"ctxgate_gateway_requests_total", []string{"route", "chat_completions", "action", "inject"}, 1},
		{"ctxgate_upstream_seconds", []string{"route", "chat_completions", "outcome", "2xx"}, 1},
		{"ctxgate_policy_reloads_total", []string{"result", "ok"}, 1},
		{"ctxgate_policy_info", []string{"name", "default"}, 1},
		{"ctxgate_pool_size", []string{"pool", "fast"}, 2},
		{"ctxgate_pool_size", []string{"pool", "large"}, float64(defaultLargeConcurrency())},
		{"ctxgate_pool_instances", []string{"pool", "fast", "state", "in_use"}, 0},
		{"ctxgate_pool_instances", []string{"pool", "large", "state", "in_use"}, 0},
		{"ctxgate_http_requests_total", []string{"route", "gate", "code", "2xx"}, 4},
		{"ctxgate_http_requests_total", []string{"route", "gate", "code", "4xx"}, 1},
		{"ctxgate_http_requests_total", []string{"route", "chat_completions", "code", "2xx"}, 1},
	} {
		if got := metricValue(t, f, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// The score histogram's sum is the sum of the decisions' confidences
	// (four /v1/gate decisions plus the gateway's inject).
	injectConf := mustDecision(t, post(t, s.url+"/v1/gate", request(t, "default", "inject")).body).confidence()
	h := f["ctxgate_decision_confidence"].Metric[0].Histogram
	if got, want := h.GetSampleSum(), confSum+injectConf; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("score sum %v, want %v", got, want)
	}
	if idle := metricValue(t, f, "ctxgate_pool_instances", "pool", "fast", "state", "idle"); idle < 1 || idle > 2 {
		t.Errorf("idle instances %v", idle)
	}
	// The states partition the live instances: summed, each pool's gauges
	// are its live count (/healthz), with no instance counted twice.
	hv := health(t, s)
	for pool, live := range map[string]int{"fast": hv.Pool.Live, "large": hv.LargePool.Live} {
		sum := metricValue(t, f, "ctxgate_pool_instances", "pool", pool, "state", "in_use") + metricValue(t, f, "ctxgate_pool_instances", "pool", pool, "state", "idle")
		if sum != float64(live) {
			t.Errorf("pool %s: in_use + idle = %v, live %d", pool, sum, live)
		}
	}
	if c := metricValue(t, f, "ctxgate_pool_instances_created_total", "pool", "fast"); c < 1 {
		t.Errorf("created %v", c)
	}
	// The Go runtime's and the process's collectors.
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_resident_memory_bytes", "process_open_fds"} {
		if f[name] == nil {
			t.Errorf("no %s", name)
		}
	}
}
