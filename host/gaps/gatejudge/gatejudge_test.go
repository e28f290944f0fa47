package gatejudge

import (
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/host/gaps"
	"github.com/ctxgate/ctxgate/policies"
)

// Re-running past queries through the real core with the support-agent policy: a
// query whose new retrieval has a chunk over the 0.35 evidence floor clears,
// one whose chunks are all under it is still refused (hard refusal), and a
// bad request is an error naming the field.
func TestGateJudgeSupportAgent(t *testing.T) {
	p, ok := policies.Get("support-agent")
	if !ok {
		t.Fatal("no support-agent preset")
	}
	j, err := Native(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := `{"query":"export invoices to quickbooks","chunks":[{"id":"a","text":"Export invoices to QuickBooks from Billing > Export.","scores":{"vector":0.82,"bm25":14.2}}]}
{"query":"okta saml setup","chunks":[{"id":"a","text":"Our office is closed on holidays.","scores":{"vector":0.05,"bm25":0.1}},{"id":"b","text":"Pricing.","scores":{"vector":0.04}}]}
{"query":"okta saml setup","chunks":[]}
{"query":"bad","chunks":[{"id":"a","text":"t","scores":{"vector":"high"}}]}
`
	rts, _, err := gaps.ReadRetrievals(strings.NewReader(lines), gaps.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		cleared, refused bool
		action           string
	}{{true, false, "inject"}, {false, true, "refuse"}, {false, true, "refuse"}} {
		o, err := j.Judge(&rts[i])
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if o.Cleared != want.cleared || o.Refused != want.refused || o.Action != want.action {
			t.Errorf("line %d: %+v, want %+v", i+1, o, want)
		}
	}
	if _, err := j.Judge(&rts[3]); err == nil || !strings.Contains(err.Error(), "chunks[0].scores.vector") {
		t.Errorf("bad request: %v", err)
	}
	if !strings.HasPrefix(j.Name(), "gate support-agent@1") {
		t.Errorf("name %q", j.Name())
	}
}
