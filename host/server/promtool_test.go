package server

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// promtool is Prometheus's own checker (Debian's prometheus package,
// installed by scripts/install-deps.sh). In CI (CI=true) a missing promtool
// fails the test; elsewhere it skips, saying so.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is not installed (scripts/install-deps.sh installs Debian's prometheus package)")
		}
		t.Skip("promtool is not installed (apt-get install prometheus); CI runs this test")
	}
	return p
}

// TestPromtoolCheckMetrics: a live /metrics page, after traffic that
// creates every labelled series (decisions, gateway requests, upstream
// outcomes, errors, feedback, gap events), passes `promtool check metrics`:
// the exposition parses and follows Prometheus's naming rules (counters end
// in _total, base units, no reserved suffixes on gauges).
func TestPromtoolCheckMetrics(t *testing.T) {
	bin := promtool(t)
	up := newUpstream(t, "Open Settings [S1].")
	s := start(t, Options{Upstream: up.ts.URL, GapLog: filepath.Join(t.TempDir(), "gaps.jsonl"), AccessLog: &bytes.Buffer{}})
	var id string
	for _, name := range []string{"inject", "caveat", "refuse_off_topic"} {
		r := post(t, s.url+"/v1/gate", request(t, "default", name))
		id = r.header.Get(HeaderDecisionID)
		chat, _ := chatFor(t, request(t, "default", name), false)
		post(t, s.url+"/v1/chat/completions", chat)
	}
	post(t, s.url+"/v1/feedback", []byte(`{"decision_id":"`+id+`","rating":"down"}`))
	post(t, s.url+"/v1/gate", []byte(`{"query":`))
	do(t, http.MethodGet, s.url+"/v1/models", nil)
	s.gaps.Flush()

	page := do(t, http.MethodGet, s.url+"/metrics", nil)
	if page.status != 200 {
		t.Fatalf("/metrics: %d", page.status)
	}
	for _, name := range []string{"ctxgate_decisions_total", "ctxgate_upstream_seconds_bucket", "ctxgate_pool_instances", "go_goroutines", "process_cpu_seconds_total"} {
		if !bytes.Contains(page.body, []byte("\n"+name)) {
			t.Errorf("the page has no %s", name)
		}
	}
	for _, line := range strings.Split(string(page.body), "\n") {
		if name, _, _ := strings.Cut(line, "{"); line != "" && line[0] != '#' &&
			!strings.HasPrefix(name, "ctxgate_") && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") {
			t.Errorf("a metric outside ctxgate_, go_ and process_: %s", line)
		}
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = bytes.NewReader(page.body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
	t.Logf("promtool check metrics: %d bytes, %d samples, no problems", len(page.body), bytes.Count(page.body, []byte("\n"))-bytes.Count(page.body, []byte("\n#")))
}

// TestPromtoolCheckRules: the recording rules that give the sufficient-context gateway's metric
// names (examples/serve/prometheus-rules.yaml) are valid rules.
func TestPromtoolCheckRules(t *testing.T) {
	bin := promtool(t)
	out, err := exec.Command(bin, "check", "rules", filepath.Join("..", "..", "examples", "serve", "prometheus-rules.yaml")).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("SUCCESS")) {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}
