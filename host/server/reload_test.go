package server

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/host"
)

func activeSHA(t testing.TB, s *testServer) string {
	t.Helper()
	var p struct {
		Policy policyRef `json:"policy"`
	}
	decode(t, do(t, http.MethodGet, s.url+"/v1/policy", nil).body, &p)
	return p.Policy.SHA256
}

// editedPolicy is a preset with a changed version, so its sha256 differs.
func editedPolicy(t testing.TB, name, version string) []byte {
	t.Helper()
	var p map[string]any
	decode(t, preset(t, name), &p)
	p["version"] = version
	return mustJSON(t, p)
}

func TestReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(path, editedPolicy(t, "default", "a"), 0o644)
	s := start(t, Options{Policy: PolicySource{Path: path}})
	shaA := activeSHA(t, s)

	// Good: the new policy decides from the next request on.
	os.WriteFile(path, editedPolicy(t, "default", "b"), 0o644)
	if err := s.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	shaB := activeSHA(t, s)
	r := post(t, s.url+"/v1/gate", request(t, "default", "inject"))
	if shaB == shaA || r.header.Get(HeaderPolicy) != "default@b" {
		t.Fatalf("after a good reload: sha %s (was %s), policy header %q", shaB, shaA, r.header.Get(HeaderPolicy))
	}

	// Bad: not JSON, then JSON the gate rejects. The old policy stays and
	// the log says why.
	for _, bad := range []string{`{"name":"x",`, `{"name":"x","version":"1","colour":"red"}`} {
		os.WriteFile(path, []byte(bad), 0o644)
		err := s.Reload(context.Background())
		if err == nil {
			t.Fatalf("reload of %s succeeded", bad)
		}
		if got := activeSHA(t, s); got != shaB {
			t.Fatalf("a bad policy replaced the good one")
		}
		if r := post(t, s.url+"/v1/gate", request(t, "default", "inject")); r.status != 200 || r.header.Get(HeaderPolicy) != "default@b" {
			t.Fatalf("after a bad reload: %d %s", r.status, r.header.Get(HeaderPolicy))
		}
	}
	if !strings.Contains(s.log.String(), "keeping the current policy") || !strings.Contains(s.log.String(), "colour") {
		t.Fatalf("log does not say why:\n%s", s.log.String())
	}
	// Reloading an unchanged file is a no-op (no new gate is built).
	os.WriteFile(path, editedPolicy(t, "default", "b"), 0o644)
	a := s.cur.Load()
	if err := s.Reload(context.Background()); err != nil || s.cur.Load() != a {
		t.Fatalf("unchanged policy: err %v, swapped %v", err, s.cur.Load() != a)
	}
}

// TestReloadOnFileChange: the poller notices a changed mtime and reloads.
func TestReloadOnFileChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(path, editedPolicy(t, "default", "a"), 0o644)
	s := start(t, Options{Policy: PolicySource{Path: path}, ReloadPoll: 20 * time.Millisecond})
	old := activeSHA(t, s)
	os.WriteFile(path, editedPolicy(t, "default", "polled"), 0o644)
	os.Chtimes(path, time.Now().Add(time.Second), time.Now().Add(time.Second))
	eventually(t, "the poller to reload", func() bool { return activeSHA(t, s) != old })
	if r := post(t, s.url+"/v1/gate", request(t, "default", "inject")); r.header.Get(HeaderPolicy) != "default@polled" {
		t.Fatalf("policy header %q", r.header.Get(HeaderPolicy))
	}
}

// TestReloadUnderLoad: requests keep succeeding while policies are swapped
// back and forth; no request sees a closed gate, and every retired gate is
// closed once drained.
func TestReloadUnderLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(path, editedPolicy(t, "default", "0"), 0o644)
	s := start(t, Options{Policy: PolicySource{Path: path}, PoolSize: 2})
	body := request(t, "default", "inject")
	var failures atomic.Int64
	stop := hammer(4, func() {
		r := post(t, s.url+"/v1/gate", body)
		if r.status != 200 {
			failures.Add(1)
			t.Errorf("status %d: %s", r.status, r.body)
		}
	})
	var retired []*active
	for i := 1; i <= 8; i++ {
		os.WriteFile(path, editedPolicy(t, "default", string(rune('0'+i))), 0o644)
		old := s.cur.Load()
		if err := s.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
		retired = append(retired, old)
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if failures.Load() > 0 {
		t.Fatalf("%d requests failed during reloads", failures.Load())
	}
	for i, a := range retired {
		select {
		case <-a.done:
		case <-time.After(5 * time.Second):
			t.Fatalf("retired gate %d was never closed (refs %d)", i, a.refs.Load())
		}
	}
}

// TestReloadSigned: with trust keys, only a bundle they sign loads; an
// unsigned or tampered policy is refused on reload and the signed one stays.
// The same in the module, in the module without termination checks, and
// natively (the same bundle rules, host.NewNativeTrusted).
func TestReloadSigned(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts Options
	}{{"wasm", Options{}}, {"wasm-interrupt-always", Options{Interrupt: host.InterruptAlways}}, {"native", Options{Native: true}}} {
		t.Run(mode.name, func(t *testing.T) { testReloadSigned(t, mode.opts) })
	}
}

func testReloadSigned(t *testing.T, opts Options) {
	s, sg, path := startSigned(t, opts, "signed-1")
	if r := post(t, s.url+"/v1/gate", request(t, "default", "inject")); r.status != 200 || r.header.Get(HeaderPolicy) != "default@signed-1" {
		t.Fatalf("signed policy: %d %q %s", r.status, r.header.Get(HeaderPolicy), r.body)
	}
	// Unsigned.
	os.WriteFile(path, editedPolicy(t, "default", "unsigned"), 0o644)
	if err := s.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "signed bundle") {
		t.Fatalf("unsigned policy: %v", err)
	}
	// Tampered: a signed bundle whose policy was edited afterwards.
	b := sg.bundle(t, "signed-2")
	tampered := []byte(strings.Replace(string(b), `"signed-2"`, `"evil"`, 1))
	os.WriteFile(path, tampered, 0o644)
	if err := s.Reload(context.Background()); err == nil {
		t.Fatal("a tampered bundle loaded")
	}
	if r := post(t, s.url+"/v1/gate", request(t, "default", "inject")); r.header.Get(HeaderPolicy) != "default@signed-1" {
		t.Fatalf("after refused reloads the policy is %q", r.header.Get(HeaderPolicy))
	}
	// A properly signed update loads.
	os.WriteFile(path, b, 0o644)
	if err := s.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := post(t, s.url+"/v1/gate", request(t, "default", "inject")); r.header.Get(HeaderPolicy) != "default@signed-2" {
		t.Fatalf("signed update: %q", r.header.Get(HeaderPolicy))
	}
	var doc struct {
		Document struct {
			Bundle int `json:"ctxgate_bundle"`
		} `json:"document"`
	}
	decode(t, do(t, http.MethodGet, s.url+"/v1/policy", nil).body, &doc)
	if doc.Document.Bundle != 1 {
		t.Fatal("/v1/policy does not show the signed bundle")
	}
}

// TestFirstLoadFails: a server started without a loadable policy says that no
// policy is loaded, not that it keeps one, and answers 503 until one loads.
func TestFirstLoadFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(path, []byte(`{"name":"x",`), 0o644)
	s := start(t, Options{Policy: PolicySource{Path: path}})
	if log := s.log.String(); !strings.Contains(log, "policy load failed; no policy is loaded") || strings.Contains(log, "keeping the current policy") {
		t.Fatalf("log of a failed first load:\n%s", log)
	}
	if r := post(t, s.url+"/v1/gate", request(t, "default", "inject")); r.status != 503 {
		t.Fatalf("without a policy: %d", r.status)
	}
	os.WriteFile(path, editedPolicy(t, "default", "a"), 0o644)
	if err := s.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := post(t, s.url+"/v1/gate", request(t, "default", "inject")); r.status != 200 {
		t.Fatalf("after the policy loaded: %d", r.status)
	}
}
