package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyState: the state file's failures are loud. A state file that
// does not read fails the start (starting as if it were missing would drop
// its floor); so does a state directory that cannot be written; a reload
// whose version cannot be recorded keeps the verified policy but is logged
// and counted. Without trust keys nothing is written.
func TestPolicyState(t *testing.T) {
	dir := t.TempDir()
	sg := newSigner(t, dir)
	path := filepath.Join(dir, "policy.bundle.json")
	os.WriteFile(path, sg.bundle(t, "2"), 0o644)
	signed := PolicySource{Path: path, TrustFiles: []string{sg.trust}}
	state := path + stateFileSuffix

	os.WriteFile(state, []byte(`{"version":`), 0o644)
	if _, _, err := newServer(t, Options{Policy: signed, RequirePolicy: true}); err == nil || !strings.Contains(err.Error(), "not a state record") {
		t.Errorf("a corrupt state file: %v", err)
	}
	os.Remove(state)
	if _, _, err := newServer(t, Options{Policy: signed, RequirePolicy: true, StateDir: filepath.Join(dir, "missing")}); err == nil || !strings.Contains(err.Error(), "cannot write") {
		t.Errorf("an unwritable state directory: %v", err)
	}

	stateDir := filepath.Join(dir, "state")
	os.Mkdir(stateDir, 0o755)
	s := start(t, Options{Policy: signed, StateDir: stateDir})
	os.WriteFile(path, sg.bundle(t, "3"), 0o644)
	if err := s.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(stateDir, filepath.Base(state))); err != nil || !strings.Contains(string(b), `"version":"3"`) {
		t.Errorf("state after a reload to v3: %s %v", b, err)
	}
	os.RemoveAll(stateDir)
	os.WriteFile(path, sg.bundle(t, "4"), 0o644)
	if err := s.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := post(t, s.url+"/v1/gate", request(t, "default", "inject")); r.header.Get(HeaderPolicy) != "default@4" {
		t.Errorf("a verified policy whose state was not written: %q", r.header.Get(HeaderPolicy))
	}
	if got := metricValue(t, scrape(t, s), "ctxgate_policy_state_errors_total"); got != 1 {
		t.Errorf("policy_state_errors_total = %v", got)
	}
	if !strings.Contains(s.log.String(), "policy state not written") {
		t.Errorf("not logged:\n%s", s.log.String())
	}

	unsigned := filepath.Join(dir, "plain.json")
	os.WriteFile(unsigned, editedPolicy(t, "default", "1"), 0o644)
	start(t, Options{Policy: PolicySource{Path: unsigned}})
	if _, err := os.Stat(unsigned + stateFileSuffix); err == nil {
		t.Errorf("a state file without trust keys")
	}
}
