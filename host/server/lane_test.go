package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// slowRequest is valid, within the default limits, and slow for the TinyGo
// module with termination checks (0.3-0.7 s; 80-120 ms without): 1000
// chunks of CJK text, the costliest text to tokenize. (Issue 15's attack, a
// metadata object of many keys, is no longer slow, and over 1 MiB it is
// refused before it is read.)
func slowRequest() []byte {
	var b bytes.Buffer
	b.WriteString(`{"query":"知识检索的置信度","chunks":[`)
	for i := range 1000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":"c` + strconv.Itoa(i) + `","text":"` + strings.Repeat("知识检索增强生成系统的置信度门控", 15) + `","scores":{"vector":0.8}}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

type healthView struct {
	Pool, LargePool struct {
		Size, Live, InUse int
	}
	LargeBodyBytes int `json:"large_body_bytes"`
}

func health(t *testing.T, s *testServer) healthView {
	t.Helper()
	var h struct {
		Pool      struct{ Size, Live, InUse int } `json:"pool"`
		LargePool struct{ Size, Live, InUse int } `json:"large_pool"`
		LargeBody int                             `json:"large_body_bytes"`
	}
	decode(t, do(t, http.MethodGet, s.url+"/healthz", nil).body, &h)
	return healthView{Pool: h.Pool, LargePool: h.LargePool, LargeBodyBytes: h.LargeBody}
}

// TestLargeRequestLane: inputs over LargeBodyBytes run in their own pool of
// LargeConcurrency instances, with termination checks: a slow one is
// stopped at the gate deadline (its instance is discarded, which a run
// without checks that merely ends late never is), and it never takes an
// instance of the fast pool, where ordinary requests keep being decided.
func TestLargeRequestLane(t *testing.T) {
	s := start(t, Options{LargeBodyBytes: 64 << 10, LargeConcurrency: 1, PoolSize: 2, GateTimeout: 100 * time.Millisecond})
	small := request(t, "default", "inject")
	if r := post(t, s.url+"/v1/gate", small); r.status != 200 {
		t.Fatalf("small request: %d %s", r.status, r.body)
	}
	h := health(t, s)
	if h.Pool.Size != 2 || h.LargePool.Size != 1 || h.LargePool.Live != 0 || h.LargeBodyBytes != 64<<10 {
		t.Fatalf("after a small request: %+v", h)
	}
	slow := slowRequest()
	began := time.Now()
	r := post(t, s.url+"/v1/gate", slow)
	t.Logf("%d-byte request answered %d after %v", len(slow), r.status, time.Since(began).Round(time.Millisecond))
	wantError(t, r, 503, codeTimeout, "")
	fams := scrape(t, s)
	if got := metricValue(t, fams, "ctxgate_large_requests_total"); got != 1 {
		t.Errorf("ctxgate_large_requests_total = %v, want 1", got)
	}
	lane := s.cur.Load().largeStats()
	if lane.Discarded != 1 {
		t.Errorf("the slow call was not stopped at its deadline: lane %+v", lane)
	}
	if main := s.cur.Load().stats(); main.Created != 1 || main.Discarded != 0 {
		t.Errorf("the large request touched the fast pool: %+v", main)
	}
	// A large request that is not slow is decided in the lane.
	var text strings.Builder
	for text.Len() < 70<<10 {
		text.WriteString("reset your password from the security settings page. ")
	}
	big := []byte(`{"query":"how do I reset my password","chunks":[{"id":"a","text":"` + text.String()[:60<<10] + `","scores":{"vector":0.8}},{"id":"b","text":"` + text.String()[:20<<10] + `","scores":{"vector":0.7}}]}`)
	if r := post(t, s.url+"/v1/gate", big); r.status != 200 {
		t.Fatalf("large ordinary request: %d %s", r.status, truncate(r.body))
	}
	if got := metricValue(t, scrape(t, s), "ctxgate_large_requests_total"); got != 2 {
		t.Errorf("ctxgate_large_requests_total = %v, want 2", got)
	}
}

// TestLargeRequestLaneGateway: the gateway routes by the size of the gate
// request it builds, so the same attack through documents[].metadata is
// stopped at the deadline in the lane, and the upstream is not called.
func TestLargeRequestLaneGateway(t *testing.T) {
	up := newUpstream(t, "Open Settings [S1].")
	s := start(t, Options{Upstream: up.ts.URL, GateTimeout: 100 * time.Millisecond})
	gateReq := slowRequest()
	var m map[string]json.RawMessage
	decode(t, gateReq, &m)
	chat := mustJSON(t, map[string]any{"model": "m", "documents": m["chunks"],
		"messages": []map[string]string{{"role": "user", "content": "how do I reset my password"}}})
	wantGatewayError(t, post(t, s.url+"/v1/chat/completions", chat), 503, codeTimeout, "")
	if up.calls.Load() != 0 {
		t.Fatal("the upstream was called")
	}
	if lane := s.cur.Load().largeStats(); lane.Discarded != 1 {
		t.Fatalf("the call was not stopped in the lane: %+v", lane)
	}
}

// TestLargeRequestLaneOff: LargeBodyBytes < 0 turns the lane off, as does
// the native core (which the Go scheduler preempts anyway).
func TestLargeRequestLaneOff(t *testing.T) {
	for _, o := range []Options{{LargeBodyBytes: -1}, {Native: true}} {
		s := start(t, o)
		if s.cur.Load().large != nil {
			t.Errorf("%+v: a lane was built", o)
		}
		if r := do(t, http.MethodGet, s.url+"/healthz", nil); strings.Contains(string(r.body), "large_pool") {
			t.Errorf("%+v: /healthz shows a lane: %s", o, r.body)
		}
	}
}
