package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/policies"
)

// trustModeFixture makes single-scheme and hybrid keys and a bundle of the
// wikigr preset signed by each: p("ed.pub"), p("ed.bundle.json"), and so
// on for ed, ml, hybrid and other (hybrid keys nobody trusts), and
// p("edml.bundle.json") signed by both single-scheme keys.
func trustModeFixture(t *testing.T) func(string) string {
	t.Helper()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	plain, _ := policies.Get("wikigr")
	os.WriteFile(p("policy.json"), plain, 0o644)
	for prefix, alg := range map[string]string{"ed": "ed25519", "ml": "ml-dsa", "hybrid": "hybrid", "other": "hybrid"} {
		if code, _, errs := ctl(t, "keygen", "--alg", alg, "--out", p(prefix)); code != exitOK {
			t.Fatalf("keygen %s: %s", alg, errs)
		}
		code, b, errs := ctl(t, "sign", "--key", p(prefix+".key"), p("policy.json"))
		if code != exitOK {
			t.Fatalf("sign: %s", errs)
		}
		os.WriteFile(p(prefix+".bundle.json"), []byte(b), 0o644)
	}
	// edml: a hybrid bundle made with the two single-scheme keys.
	code, b, errs := ctl(t, "sign", "--key", p("ed.key"), "--key", p("ml.key"), p("policy.json"))
	if code != exitOK {
		t.Fatalf("sign: %s", errs)
	}
	os.WriteFile(p("edml.bundle.json"), []byte(b), 0o644)
	return p
}

// --trust-mode on eval: single-scheme keys open bundles they sign in their
// mode, and nothing opens across schemes, natively and in both modules.
func TestEvalTrustMode(t *testing.T) {
	p := trustModeFixture(t)
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			f := modeFlags(t, mode)
			for _, c := range []struct {
				bundle, trust, trustMode string
				ok                       bool
			}{
				{"ed", "ed", "", false}, // hybrid by default: an Ed25519 signature alone is not enough
				{"ed", "ed", "hybrid", false},
				{"ed", "ed", "ed25519", true},
				{"edml", "ed", "ed25519", true},
				{"edml", "ed", "", false},
				{"edml", "ed+ml", "", true},
				{"ed", "ed+ml", "ed25519", true},
				{"ed", "ml", "ml-dsa", false},
				{"ed", "ed+ml", "ml-dsa-65", false},
				{"ml", "ml", "ml-dsa", true},
				{"ml", "ml", "ml-dsa-65", true},
				{"edml", "ml", "ml-dsa-65", true},
				{"ml", "ed+ml", "ed25519", false},
				{"ml", "ml", "", false},
				{"hybrid", "hybrid", "", true},
				{"ed", "other", "ed25519", false},
				{"other", "ed", "ed25519", false},
			} {
				args := append([]string{"eval", "--format", "json", "--policy", p(c.bundle + ".bundle.json")}, f...)
				for _, k := range strings.Split(c.trust, "+") {
					args = append(args, "--trust", p(k+".pub"))
				}
				if c.trustMode != "" {
					args = append(args, "--trust-mode", c.trustMode)
				}
				code, out, errs := cli(t, goodRequest, args...)
				name := c.bundle + " bundle, " + c.trust + " keys, mode " + c.trustMode
				switch {
				case c.ok && (code != exitOK || !strings.Contains(out, `"name":"wikigr"`)):
					t.Errorf("%s: exit %d %s %s", name, code, out, errs)
				case !c.ok && (code != exitFail || out != "" || !strings.Contains(errs, "bad_policy: signatures") || !oneLine(errs)):
					t.Errorf("%s: want refused, got exit %d %q %q", name, code, out, errs)
				}
			}
		})
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--trust-mode", "ed25519", "--policy", p("ed.bundle.json")}, "--trust-mode needs --trust"},
		{[]string{"--trust-mode", "rsa", "--trust", p("ed.pub"), "--policy", p("ed.bundle.json")}, `unknown mode "rsa"`},
	} {
		code, out, errs := cli(t, goodRequest, append([]string{"eval", "--native"}, c.args...)...)
		if code != exitUsage || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d %q %q", c.args, code, out, errs)
		}
	}
}

// --trust-mode and trust_mode on serve: an Ed25519-only deployment starts
// with the mode set (flag or config file) and not without it.
func TestServeTrustMode(t *testing.T) {
	p := trustModeFixture(t)
	base := append([]string{"serve", "--listen", "127.0.0.1:0", "--reload-poll", "0"}, wasmFlags(t, "tinygo")...)
	signed := []string{"--policy", p("ed.bundle.json"), "--trust", p("ed.pub")}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"hybrid by default", signed, exitFail, "signatures"},
		{"ml-dsa mode", append([]string{"--trust-mode", "ml-dsa"}, signed...), exitFail, "signatures"},
		{"mode without trust", []string{"--trust-mode", "ed25519", "--policy", p("ed.bundle.json")}, exitUsage, "no trust files are given"},
		{"unknown mode", append([]string{"--trust-mode", "rsa"}, signed...), exitUsage, `unknown mode "rsa"`},
	} {
		code, out, errs := cli(t, "", append(append([]string{}, base...), c.args...)...)
		if code != c.code || strings.Contains(out, "listening") || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and %q", c.name, code, out, errs, c.code, c.want)
		}
	}

	config := p("ctxgate.yaml")
	os.WriteFile(config, []byte("policy: "+p("ed.bundle.json")+"\ntrust: ["+p("ed.pub")+"]\ntrust_mode: ed25519\n"), 0o644)
	for _, args := range [][]string{
		{"--config", config},
		append([]string{"--trust-mode", "ed25519"}, signed...),
	} {
		srv := startServe(t, append(append([]string{}, base...), args...))
		resp, err := http.Post(srv.base+"/v1/gate", "application/json", bytes.NewReader([]byte(goodRequest)))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"name":"wikigr"`)) {
			t.Fatalf("%v: %d %s", args, resp.StatusCode, body)
		}
		stopServe(t, srv)
	}
}
