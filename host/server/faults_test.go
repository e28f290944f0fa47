package server

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// memoryHog is a valid request that needs more memory than a 17-page
// (1.06 MiB) instance has: the TinyGo module traps out of memory.
func memoryHog() []byte {
	var b strings.Builder
	b.WriteString(`{"query":"lorem memory","chunks":[`)
	for i := range 100 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":"c` + strconv.Itoa(i) + `","text":"` + strings.Repeat("lorem ipsum dolor ", 140) + `","scores":{"vector":0.5}}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// TestTrapLogged: a trap is answered 500, and logged (rate-limited) with the
// id sent to the client in X-Ctxgate-Decision-Id, the operation, the pool
// and the input size; a flood of traps costs one line a second, and the
// next line says how many were left out.
func TestTrapLogged(t *testing.T) {
	hog := memoryHog()
	s := start(t, Options{MaxPages: 17, MaxBodyBytes: 270 << 10, PoolSize: 1})
	r := post(t, s.url+"/v1/gate", hog)
	wantError(t, r, 500, "internal", "")
	id := r.header.Get(HeaderDecisionID)
	logs := s.log.String()
	if id == "" || !strings.Contains(logs, "module trapped") || !strings.Contains(logs, "id="+id) ||
		!strings.Contains(logs, "op=evaluate") || !strings.Contains(logs, "pool=fast") ||
		!strings.Contains(logs, "input_bytes="+strconv.Itoa(len(hog))) || !strings.Contains(logs, "policy="+s.cur.Load().ref.label()) {
		t.Fatalf("trap answered with id %q; log:\n%s", id, logs)
	}
	for range 3 {
		post(t, s.url+"/v1/gate", hog)
	}
	if n := strings.Count(s.log.String(), "module trapped"); n != 1 {
		t.Fatalf("%d trap lines for 4 traps within a second, want 1", n)
	}
	s.faultLog.mu.Lock()
	s.faultLog.last = time.Now().Add(-time.Minute)
	s.faultLog.mu.Unlock()
	post(t, s.url+"/v1/gate", hog)
	if logs := s.log.String(); strings.Count(logs, "module trapped") != 2 || !strings.Contains(logs, "suppressed_since_last=3") {
		t.Fatalf("after the interval:\n%s", logs)
	}
	// Bad input is not a fault: answered, not logged as one.
	post(t, s.url+"/v1/gate", []byte(`{"query":3}`))
	if strings.Count(s.log.String(), "gate call failed") != 2 {
		t.Fatalf("bad input was logged as a fault:\n%s", s.log.String())
	}
}
