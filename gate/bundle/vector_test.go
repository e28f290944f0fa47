package bundle_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/host/signing"
)

var update = flag.Bool("update", false, "rewrite testdata/vector from policy.json and the fixed seeds")

// The test vector (docs/signing.md, "Test vector") lets another language,
// and the Wasm build, check its verifier against fixed bytes. The seeds are
// public on purpose: bytes 0x00..0x1f for Ed25519, 0x20..0x3f for ML-DSA-65.
// Regenerate with: go test ./gate/bundle -run TestVector -update
func vectorKeys(t testing.TB) []*signing.PrivateKey {
	var out []*signing.PrivateKey
	for i, alg := range []bundle.Alg{bundle.Ed25519, bundle.MLDSA65} {
		seed := make([]byte, 32)
		for j := range seed {
			seed[j] = byte(32*i + j)
		}
		k, err := signing.NewKeyFromSeed(alg, seed)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	return out
}

func TestVector(t *testing.T) {
	dir := filepath.Join("testdata", "vector")
	policy, err := os.ReadFile(filepath.Join(dir, "policy.json"))
	if err != nil {
		t.Fatal(err)
	}
	keys := vectorKeys(t)
	canon, err := bundle.Canonical(policy)
	if err != nil {
		t.Fatal(err)
	}
	b, err := signing.Sign(policy, keys...)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{
		"secret.key":         signing.MarshalPrivateKeys(keys),
		"trust.pub":          signing.MarshalPublicKeys(pubs(keys...)),
		"signed-message.txt": bundle.Message(canon),
		"bundle.json":        b,
	}
	for name, data := range want {
		path := filepath.Join(dir, name)
		if *update {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s differs from what the fixed seeds produce (signing is deterministic; run with -update if the format changed on purpose)", path)
		}
	}

	// The stored files, not the in-memory ones, must open.
	trustFile, _ := os.ReadFile(filepath.Join(dir, "trust.pub"))
	bundleFile, _ := os.ReadFile(filepath.Join(dir, "bundle.json"))
	trust, err := bundle.ParseTrust(trustFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []bundle.Mode{bundle.Hybrid, bundle.Ed25519Only, bundle.MLDSA65Only} {
		got, err := bundle.Open(bundleFile, trust, mode)
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		if !bytes.Equal(got, canon) {
			t.Fatalf("%v: opened policy differs from the canonical policy", mode)
		}
	}
}
