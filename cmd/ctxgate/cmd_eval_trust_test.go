package main

import (
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/host/signing"
	"github.com/ctxgate/ctxgate/policies"
)

// signedPolicy writes the default preset with the given version, signed by
// fresh hybrid keys, and the trust file for them; it returns both paths.
func signedPolicy(t *testing.T, dir, version string) (bundlePath, trustPath string) {
	t.Helper()
	var keys []*signing.PrivateKey
	var pubs []bundle.PublicKey
	for _, alg := range signing.Algs {
		k, err := signing.GenerateKey(alg, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		keys, pubs = append(keys, k), append(pubs, k.Public())
	}
	var p map[string]any
	def, _ := policies.Get("default")
	json.Unmarshal(def, &p)
	p["version"] = version
	doc, _ := json.Marshal(p)
	b, err := signing.Sign(doc, keys...)
	if err != nil {
		t.Fatal(err)
	}
	bundlePath, trustPath = filepath.Join(dir, "policy.bundle.json"), filepath.Join(dir, "keys.pub")
	os.WriteFile(bundlePath, b, 0o644)
	os.WriteFile(trustPath, signing.MarshalPublicKeys(pubs), 0o644)
	return bundlePath, trustPath
}

// TestEvalPolicyFailsClosed: an empty policy file, or --trust without a
// policy, is an error on every path, never the unsigned built-in default;
// --min-version refuses an older signed policy.
func TestEvalPolicyFailsClosed(t *testing.T) {
	dir := t.TempDir()
	signed, trust := signedPolicy(t, dir, "2.0")
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, nil, 0o644)
	blank := filepath.Join(dir, "blank.json")
	os.WriteFile(blank, []byte(" \n\t\n"), 0o644)
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			f := modeFlags(t, mode)
			for _, c := range []struct {
				name string
				args []string
				want string // "" for exit 0
			}{
				{"empty file", []string{"--policy", empty}, "is empty"},
				{"blank file", []string{"--policy", blank}, "is empty"},
				{"empty file with trust", []string{"--trust", trust, "--policy", empty}, "is empty"},
				{"trust without a policy", []string{"--trust", trust}, "signed bundle is required"},
				{"signed", []string{"--trust", trust, "--policy", signed}, ""},
				{"signed at the minimum", []string{"--trust", trust, "--policy", signed, "--min-version", "2"}, ""},
				{"signed below the minimum", []string{"--trust", trust, "--policy", signed, "--min-version", "2.0.1"}, "older than --min-version 2.0.1"},
				{"built-in default below a minimum", []string{"--min-version", "999"}, "older than --min-version 999"},
			} {
				args := append(append([]string{"eval"}, f...), c.args...)
				code, out, errs := cli(t, goodRequest, args...)
				switch {
				case c.want == "" && (code != exitOK || !strings.Contains(out, `"version":"2.0"`)):
					t.Errorf("%s: exit %d, %s %s", c.name, code, out, errs)
				case c.want != "" && (code != exitFail || out != "" || !strings.Contains(errs, c.want)):
					t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and %q", c.name, code, out, errs, c.want)
				}
			}
		})
	}
}
