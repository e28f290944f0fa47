package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/internal/hostile"
	"github.com/ctxgate/ctxgate/internal/safefile"
)

// relink points the symlink at link to target, atomically (a new link
// renamed over the old one), as a deployment that swaps a "current" link
// does.
func relink(t testing.TB, target, link string) {
	t.Helper()
	tmp := link + ".new"
	os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, link); err != nil {
		t.Fatal(err)
	}
}

// TestReloadRefusesSpecialFiles: with trust keys, a policy or trust path
// turned into a FIFO, /dev/zero, a directory, a sparse 2 GiB file or a
// file over the limit is refused at once, unread, with a log line and
// ctxgate_policy_file_refused_total{reason}; the server keeps deciding
// with the policy it had, and a signed bundle put back afterwards loads.
func TestReloadRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	sg := newSigner(t, dir)
	v1, v2 := filepath.Join(dir, "v1.json"), filepath.Join(dir, "v2.json")
	os.WriteFile(v1, sg.bundle(t, "1"), 0o644)
	os.WriteFile(v2, sg.bundle(t, "2"), 0o644)
	policy, trust := filepath.Join(dir, "policy.bundle.json"), filepath.Join(dir, "trust.pub")
	relink(t, v1, policy)
	relink(t, sg.trust, trust)
	s := start(t, Options{Policy: PolicySource{Path: policy, TrustFiles: []string{trust}}})
	files, err := hostile.Files(t.TempDir(), safefile.MaxPolicyBytes)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, f := range files {
		for _, c := range []struct{ link, good string }{{policy, v1}, {trust, sg.trust}} {
			relink(t, f.Path, c.link)
			began := time.Now()
			err := s.Reload(context.Background())
			took := time.Since(began)
			var refused *safefile.Error
			if !errors.As(err, &refused) || refused.Path != c.link {
				t.Fatalf("%s at %s: %v", f.Name, filepath.Base(c.link), err)
			}
			want[refused.Reason]++
			if took > 5*time.Second { // the same bytes read twice would be 50 ms; a blocked open, forever
				t.Errorf("%s at %s: the reload took %v", f.Name, filepath.Base(c.link), took)
			}
			if r := post(t, s.url+"/v1/gate", request(t, "default", "inject")); r.status != 200 || r.header.Get(HeaderPolicy) != "default@1" {
				t.Fatalf("%s: after the refusal: %d %q", f.Name, r.status, r.header.Get(HeaderPolicy))
			}
			relink(t, c.good, c.link)
		}
	}
	fams := scrape(t, s)
	for _, reason := range []string{safefile.NotRegular, safefile.TooLarge} {
		if got := metricValue(t, fams, "ctxgate_policy_file_refused_total", "reason", reason); got != want[reason] || got == 0 {
			t.Errorf("policy_file_refused_total{%s} = %v, want %v", reason, got, want[reason])
		}
	}
	if log := s.log.String(); !strings.Contains(log, "keeping the current policy") || !strings.Contains(log, "named pipe (FIFO), not a regular file") {
		t.Errorf("the log does not say why:\n%s", log)
	}
	relink(t, v2, policy)
	if err := s.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := post(t, s.url+"/v1/gate", request(t, "default", "inject")); r.header.Get(HeaderPolicy) != "default@2" {
		t.Fatalf("a signed bundle after the refusals: %q", r.header.Get(HeaderPolicy))
	}
}
