package server

import (
	"bytes"
	"testing"
	"time"
)

// A gate call that runs out of time (a fault, not bad input) follows the same
// fail_open / fail_closed rule as a bad body (TestGatewayFailOpen): closed
// answers 503 with the timeout error and never calls the upstream; open
// forwards the body untouched. Both mark the reply x-ctxgate-action: error
// with the code, and the server keeps serving.
func TestGatewayFailModeOnTimeout(t *testing.T) {
	chat, _ := chatFor(t, request(t, "default", "inject"), false)
	stripped, _ := stripRetrieval(chat, []string{"documents"})
	for _, open := range []bool{false, true} {
		up := newUpstream(t, "ok")
		// A deadline that has passed before any guest code runs.
		s := start(t, Options{Upstream: up.ts.URL, FailOpen: open, GateTimeout: time.Nanosecond})
		for range 3 {
			r := post(t, s.url+"/v1/chat/completions", chat)
			if r.header.Get(HeaderAction) != "error" || r.header.Get(HeaderError) != codeTimeout {
				t.Fatalf("open=%v: status %d headers %v body %s", open, r.status, r.header, truncate(r.body))
			}
			if !open {
				wantGatewayError(t, r, 503, codeTimeout, "")
				continue
			}
			sent, hdr := up.last(t)
			if r.status != 200 || !bytes.Equal(sent, stripped) || bytes.Contains(sent, []byte(`"documents"`)) || hdr.Get(HeaderAction) != "error" {
				t.Fatalf("fail open: status %d, upstream got %s", r.status, truncate(sent))
			}
		}
		if calls := up.calls.Load(); (open && calls != 3) || (!open && calls != 0) {
			t.Fatalf("open=%v: upstream called %d times", open, calls)
		}
	}
}
