package server

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/host/signing"
	"github.com/ctxgate/ctxgate/internal/testmodules"
)

// signer signs edited presets with fresh hybrid keys and holds the trust
// file for them.
type signer struct {
	keys  []*signing.PrivateKey
	trust string
}

func newSigner(t testing.TB, dir string) *signer {
	t.Helper()
	s := &signer{trust: filepath.Join(dir, "keys.pub")}
	var pubs []bundle.PublicKey
	for _, alg := range signing.Algs {
		k, err := signing.GenerateKey(alg, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		s.keys, pubs = append(s.keys, k), append(pubs, k.Public())
	}
	os.WriteFile(s.trust, signing.MarshalPublicKeys(pubs), 0o644)
	return s
}

// bundle is the default preset at version, signed.
func (s *signer) bundle(t testing.TB, version string) []byte {
	t.Helper()
	b, err := signing.Sign(editedPolicy(t, "default", version), s.keys...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// startSigned starts a server on the default preset at version, signed,
// with opts; it returns the signer and the bundle's path for reloads.
func startSigned(t testing.TB, opts Options, version string) (*testServer, *signer, string) {
	t.Helper()
	dir := t.TempDir()
	sg := newSigner(t, dir)
	path := filepath.Join(dir, "policy.bundle.json")
	os.WriteFile(path, sg.bundle(t, version), 0o644)
	opts.Policy = PolicySource{Path: path, TrustFiles: []string{sg.trust}}
	return start(t, opts), sg, path
}

var trustModes = []struct {
	name string
	opts Options
}{{"wasm", Options{}}, {"native", Options{Native: true}}}

// newServer is New with the test module and a captured log, without a
// listener: for the cases that must fail to start.
func newServer(t testing.TB, opts Options) (*Server, string, error) {
	t.Helper()
	if opts.Wasm == nil && !opts.Native {
		opts.Wasm = testmodules.Bytes(t, opts.Module)
	}
	opts.ReloadPoll = -1
	logs := &syncBuffer{}
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	s, err := New(context.Background(), opts)
	if s != nil {
		t.Cleanup(func() { s.Shutdown(context.Background()) })
	}
	return s, logs.String(), err
}

// TestStartFailsClosed: an empty or blank policy file, or trust keys with no
// policy at all, never start the server on the unsigned built-in default.
func TestStartFailsClosed(t *testing.T) {
	for _, mode := range trustModes {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			sg := newSigner(t, dir)
			empty, blank := filepath.Join(dir, "empty.json"), filepath.Join(dir, "blank.json")
			os.WriteFile(empty, nil, 0o644)
			os.WriteFile(blank, []byte("\n  \n"), 0o644)
			for _, c := range []struct {
				name string
				src  PolicySource
				want string
			}{
				{"empty file", PolicySource{Path: empty}, "is empty"},
				{"blank file", PolicySource{Path: blank}, "is empty"},
				{"empty file with trust", PolicySource{Path: empty, TrustFiles: []string{sg.trust}}, "is empty"},
				{"trust without a policy", PolicySource{TrustFiles: []string{sg.trust}}, "signed bundle is required"},
				{"trust with the sufficient_context preset", PolicySource{TrustFiles: []string{sg.trust}, SufficientContext: &SufficientContext{}}, "signed bundle is required"},
			} {
				opts := mode.opts
				opts.Policy, opts.RequirePolicy = c.src, true
				s, _, err := newServer(t, opts)
				if err == nil || !strings.Contains(err.Error(), c.want) {
					label := ""
					if s != nil {
						label = s.cur.Load().ref.label()
					}
					t.Errorf("%s: started (%s), err %v; want %q", c.name, label, err, c.want)
				}
			}
		})
	}
}

// TestUnsignedStartWarns: without trust keys the server says, once and
// loudly, that policies are not signature-checked; with them it does not.
func TestUnsignedStartWarns(t *testing.T) {
	_, logs, err := newServer(t, Options{Native: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "NOT checked") {
		t.Errorf("no warning about unsigned policies:\n%s", logs)
	}
	dir := t.TempDir()
	sg := newSigner(t, dir)
	path := filepath.Join(dir, "p.bundle.json")
	os.WriteFile(path, sg.bundle(t, "1"), 0o644)
	_, logs, err = newServer(t, Options{Native: true, Policy: PolicySource{Path: path, TrustFiles: []string{sg.trust}}})
	if err != nil || strings.Contains(logs, "NOT checked") {
		t.Errorf("signed start: err %v, log:\n%s", err, logs)
	}
}

// TestReloadEmptyKeepsPolicy: a reload that reads an empty file (with trust
// or without) fails and keeps the running policy; it is not logged as a
// reload.
func TestReloadEmptyKeepsPolicy(t *testing.T) {
	for _, mode := range trustModes {
		t.Run(mode.name, func(t *testing.T) {
			s, _, path := startSigned(t, mode.opts, "1")
			os.WriteFile(path, nil, 0o644)
			began := time.Now()
			err := s.Reload(context.Background())
			if err == nil || !strings.Contains(err.Error(), "is empty") {
				t.Fatalf("reload of an empty file: %v", err)
			}
			t.Logf("an empty file was retried for %v before the reload failed", time.Since(began).Round(time.Millisecond))
			if r := post(t, s.url+"/v1/gate", request(t, "default", "inject")); r.header.Get(HeaderPolicy) != "default@1" {
				t.Fatalf("after an empty reload the policy is %q", r.header.Get(HeaderPolicy))
			}
			if strings.Contains(s.log.String(), "policy reloaded") {
				t.Fatalf("an empty file was logged as a reload:\n%s", s.log.String())
			}
			if got := metricValue(t, scrape(t, s), "ctxgate_policy_reloads_total", "result", "error"); got != 1 {
				t.Errorf("reloads{error} = %v, want 1", got)
			}
		})
	}
}

// TestReloadRetriesMidWrite: a reload that catches the file empty or half
// written retries, and loads the complete file once it is there.
func TestReloadRetriesMidWrite(t *testing.T) {
	s, sg, path := startSigned(t, Options{}, "1")
	for _, c := range []struct {
		name, version string
		partial       func(b []byte) []byte
	}{
		{"empty", "2", func([]byte) []byte { return nil }},
		{"half written", "3", func(b []byte) []byte { return b[:len(b)/2] }},
	} {
		next := sg.bundle(t, c.version)
		os.WriteFile(path, c.partial(next), 0o644)
		done := make(chan error, 1)
		go func() { done <- s.Reload(context.Background()) }()
		time.Sleep(30 * time.Millisecond) // the reload has read the partial file
		os.WriteFile(path, next, 0o644)
		if err := <-done; err != nil {
			t.Fatalf("%s: reload across the write: %v", c.name, err)
		}
		if r := post(t, s.url+"/v1/gate", request(t, "default", "inject")); r.header.Get(HeaderPolicy) != "default@"+c.version {
			t.Fatalf("%s: after the write the policy is %q", c.name, r.header.Get(HeaderPolicy))
		}
	}
	if !strings.Contains(s.log.String(), "attempts=") {
		t.Errorf("the log does not say the reload was retried:\n%s", s.log.String())
	}
}

// TestReloadWhileOverwritten is the attack that found the hole: the poller
// watches a signed policy that is overwritten in place again and again
// (truncate, write half, pause, write the rest). Every request is decided by
// a signed version, never the built-in default, and the last version wins.
func TestReloadWhileOverwritten(t *testing.T) {
	// Versions signed-1.. (the built-in default is default@3).
	version := func(v int) string { return "signed-" + string(rune('0'+v)) }
	s, sg, path := startSigned(t, Options{ReloadPoll: 5 * time.Millisecond}, version(1))
	body := request(t, "default", "inject")
	var served sync.Map
	var requests atomic.Int64
	stop := hammer(2, func() {
		r := post(t, s.url+"/v1/gate", body)
		requests.Add(1)
		served.Store(r.header.Get(HeaderPolicy), true)
	})
	const versions = 8
	for v := 2; v <= versions; v++ {
		b := sg.bundle(t, version(v))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(15 * time.Millisecond) // empty
		f.Write(b[:len(b)/2])
		time.Sleep(15 * time.Millisecond) // half written
		f.Write(b[len(b)/2:])
		f.Close()
		time.Sleep(40 * time.Millisecond)
	}
	want := "default@" + version(versions)
	eventually(t, "the last version to load", func() bool {
		return post(t, s.url+"/v1/gate", body).header.Get(HeaderPolicy) == want
	})
	stop()
	served.Range(func(k, _ any) bool {
		if p := k.(string); !strings.HasPrefix(p, "default@signed-") {
			t.Errorf("a request was decided by %q", p)
		}
		return true
	})
	if strings.Contains(s.log.String(), "built-in default") {
		t.Errorf("the built-in default was loaded:\n%s", s.log.String())
	}
	t.Logf("%d requests over %d overwrites", requests.Load(), versions-1)
}

// TestReloadRollback: with trust keys a signed bundle older than the running
// one is refused on reload, logged as a rollback and counted apart from other
// failures; MinVersion refuses older ones at start and on reload.
func TestReloadRollback(t *testing.T) {
	s, sg, path := startSigned(t, Options{}, "101")
	os.WriteFile(path, sg.bundle(t, "100"), 0o644)
	err := s.Reload(context.Background())
	if err == nil || !strings.Contains(err.Error(), "older than the running signed policy's 101") {
		t.Fatalf("reload of v100 over v101: %v", err)
	}
	if r := post(t, s.url+"/v1/gate", request(t, "default", "inject")); r.header.Get(HeaderPolicy) != "default@101" {
		t.Fatalf("after a refused rollback the policy is %q", r.header.Get(HeaderPolicy))
	}
	if !strings.Contains(s.log.String(), "rollback") {
		t.Errorf("the log does not name the rollback:\n%s", s.log.String())
	}
	fams := scrape(t, s)
	if got := metricValue(t, fams, "ctxgate_policy_reloads_total", "result", "rollback"); got != 1 {
		t.Errorf("reloads{rollback} = %v, want 1", got)
	}
	// The same version (re-signed) and a newer one load.
	for _, v := range []string{"101", "101.1", "102"} {
		os.WriteFile(path, sg.bundle(t, v), 0o644)
		if err := s.Reload(context.Background()); err != nil {
			t.Fatalf("reload of %s: %v", v, err)
		}
	}

	// MinVersion: at start and on reload.
	os.WriteFile(path, sg.bundle(t, "1.9"), 0o644)
	_, _, err = newServer(t, Options{Policy: PolicySource{Path: path, TrustFiles: []string{sg.trust}}, MinVersion: "1.10", RequirePolicy: true})
	if err == nil || !strings.Contains(err.Error(), "older than min_version 1.10") {
		t.Fatalf("start below min_version: %v", err)
	}
	os.WriteFile(path, sg.bundle(t, "1.10"), 0o644)
	m := start(t, Options{Policy: PolicySource{Path: path}, MinVersion: "1.10"})
	os.WriteFile(path, editedPolicy(t, "default", "1.2"), 0o644)
	if err := m.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "older than min_version") {
		t.Fatalf("unsigned reload below min_version: %v", err)
	}
	// Without trust keys an unsigned policy may go back in version (above
	// the minimum): whoever writes it could write anything.
	os.WriteFile(path, editedPolicy(t, "default", "1.11"), 0o644)
	m.Reload(context.Background())
	os.WriteFile(path, editedPolicy(t, "default", "1.10.5"), 0o644)
	if err := m.Reload(context.Background()); err != nil {
		t.Fatalf("unsigned reload to an older version above the minimum: %v", err)
	}
	if r := do(t, http.MethodGet, m.url+"/v1/policy", nil); !strings.Contains(string(r.body), `"version":"1.10.5"`) {
		t.Fatalf("policy: %s", r.body)
	}
}
