package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/internal/testmodules"
	"github.com/ctxgate/ctxgate/policies"
)

// docBlock returns the first ```sh block after heading in a doc.
func docBlock(t *testing.T, doc, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", doc))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no %q", doc, heading)
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatalf("%s: no sh block under %q", doc, heading)
	}
	block, _, _ = strings.Cut(block, "```")
	return block
}

// shellWithCLI runs script with sh -eu in dir, with `ctxgate` on PATH being
// this test binary acting as the CLI (TestMain), and a private cache.
func shellWithCLI(t *testing.T, dir, script string) (string, error) {
	t.Helper()
	bin := t.TempDir()
	writeCLIShim(t, bin)
	cmd := exec.Command("sh", "-eu", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "XDG_CACHE_HOME="+cacheDir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// writeCLIShim writes dir/ctxgate, a script that runs this test binary as
// the CLI (TestMain).
func writeCLIShim(t *testing.T, dir string) {
	t.Helper()
	shim := "#!/bin/sh\n" + runMainEnv + "=1 exec " + shellQuote(os.Args[0]) + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "ctxgate"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// The quick start of docs/signing.md, run verbatim: keys, a signed policy,
// verification, a trusted eval, and the receipt round trip, which holds
// because a receipt covers exactly the bytes eval writes (so sha256sum of
// the decision file is the receipt's decision_sha256).
func TestSigningDocQuickStart(t *testing.T) {
	if embedded := filepath.Join("..", "..", "host", "wasm", "ctxgate.wasm"); !fileExists(embedded) {
		testmodules.NotBuilt(t, "tinygo", errors.New(embedded+" is missing or empty"))
	}
	script := docBlock(t, "docs/signing.md", "## Quick start")
	for _, want := range []string{"> dec.json", "verify-receipt", "--decision dec.json"} {
		if !strings.Contains(script, want) {
			t.Fatalf("the quick start no longer has %q:\n%s", want, script)
		}
	}
	dir := t.TempDir()
	policy, _ := policies.Get("wikigr")
	req, err := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", "default", "inject.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "policy.json"), policy, 0o644)
	os.WriteFile(filepath.Join(dir, "req.json"), req, 0o644)
	out, err := shellWithCLI(t, dir, script)
	if err != nil {
		t.Fatalf("the quick start fails: %v\n%s", err, out)
	}
	if !strings.Contains(out, `"request_checked":true,"decision_checked":true`) || !strings.Contains(out, `"name":"wikigr"`) {
		t.Fatalf("quick start output:\n%s", out)
	}
	dec, _ := os.ReadFile(filepath.Join(dir, "dec.json"))
	rec, _ := os.ReadFile(filepath.Join(dir, "receipt.json"))
	var r struct {
		DecisionSHA256 string `json:"decision_sha256"`
	}
	json.Unmarshal(rec, &r)
	if sum := sha256.Sum256(dec); hex.EncodeToString(sum[:]) != r.DecisionSHA256 || !strings.HasSuffix(string(dec), "}\n") {
		t.Fatalf("sha256(dec.json) is not the receipt's decision_sha256 %s", r.DecisionSHA256)
	}

	// The decision without its newline is other bytes: refused.
	os.WriteFile(filepath.Join(dir, "trimmed.json"), dec[:len(dec)-1], 0o644)
	out, err = shellWithCLI(t, dir, "ctxgate verify-receipt --trust ops.pub --decision trimmed.json receipt.json")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFail || !strings.Contains(out, "the decision does not match the receipt") {
		t.Fatalf("a changed decision file: %v\n%s", err, out)
	}
}

// A receipt covers the JSON eval writes: --receipt makes JSON the default
// even on a terminal, and refuses --format text.
func TestEvalReceiptFormat(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := ctl(t, "keygen", "--out", filepath.Join(dir, "k")); code != exitOK {
		t.Fatalf("keygen: %s", errs)
	}
	asTerminal(t)
	rf := []string{"--receipt-key", filepath.Join(dir, "k.key"), "--receipt", filepath.Join(dir, "r.json")}
	code, out, errs := cli(t, goodRequest, append([]string{"eval", "--native"}, rf...)...)
	if code != exitOK || !strings.HasPrefix(out, `{"action":`) {
		t.Fatalf("--receipt on a terminal: exit %d %q %s", code, out, errs)
	}
	code, out, errs = cli(t, goodRequest, append([]string{"eval", "--native", "--format", "text"}, rf...)...)
	if code != exitUsage || out != "" || !strings.Contains(errs, "use --format json") {
		t.Fatalf("--receipt --format text: exit %d %q %q", code, out, errs)
	}
}
