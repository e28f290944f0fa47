package bundle_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxgate/ctxgate/gate/bundle"
)

// FuzzOpen: no input makes Open panic (a panic is a trap in the TinyGo
// guest), every error is a bad_policy *gate.Error, and an input that opens
// yields exactly the test vector's canonical policy (only its signer's keys
// are trusted, so nothing else may open).
//
//	go test ./gate/bundle -run '^$' -fuzz FuzzOpen -fuzztime 30s
func FuzzOpen(f *testing.F) {
	dir := filepath.Join("testdata", "vector")
	good, err := os.ReadFile(filepath.Join(dir, "bundle.json"))
	if err != nil {
		f.Fatal(err)
	}
	trustJSON, _ := os.ReadFile(filepath.Join(dir, "trust.pub"))
	trust, err := bundle.ParseTrust(trustJSON)
	if err != nil {
		f.Fatal(err)
	}
	policy, _ := os.ReadFile(filepath.Join(dir, "policy.json"))
	want, _ := bundle.Canonical(policy)
	f.Add(good)
	f.Add(policy)
	f.Add([]byte(`{"ctxgate_bundle":1,"policy":{},"signatures":[{"alg":"ed25519","key_id":"x","sig":""}]}`))
	f.Add(trustJSON)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mode := range []bundle.Mode{bundle.Hybrid, bundle.Ed25519Only, bundle.MLDSA65Only} {
			got, err := bundle.Open(data, trust, mode)
			if err != nil {
				wantPolicyError(t, err, errField(err), "")
				continue
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("opened a policy nobody signed: %s", got)
			}
		}
		bundle.ParseTrust(data) // must not panic
	})
}
