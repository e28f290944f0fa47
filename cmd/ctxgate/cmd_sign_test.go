package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/host/signing"
)

// ctl runs the CLI in-process and returns exit code, stdout, stderr.
func ctl(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestSignCommands(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	write := func(name, data string) {
		if err := os.WriteFile(p(name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("policy.json", `{"name": "cli", "version": "2.0", "thresholds": {"inject": 0.7}}`)

	for _, prefix := range []string{"a", "b"} {
		if code, out, errOut := ctl(t, "keygen", "--out", p(prefix)); code != 0 || !strings.Contains(out, "ml-dsa-65 ") {
			t.Fatalf("keygen %s: %d %s %s", prefix, code, out, errOut)
		}
	}
	if code, _, errOut := ctl(t, "keygen", "--out", p("a")); code != exitFail || !strings.Contains(errOut, "exists") {
		t.Errorf("keygen over an existing key: %d %s", code, errOut)
	}
	if code, _, _ := ctl(t, "keygen", "--alg", "rsa", "--out", p("c")); code != exitUsage {
		t.Errorf("keygen --alg rsa: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := ctl(t, "keygen", "--alg", "ed25519", "--out", p("ed")); code != 0 {
		t.Error("keygen --alg ed25519 failed")
	}

	code, bundleJSON, errOut := ctl(t, "sign", "--key", p("a.key"), p("policy.json"))
	if code != 0 {
		t.Fatalf("sign: %d %s", code, errOut)
	}
	write("bundle.json", bundleJSON)
	if code, _, errOut := ctl(t, "sign", "--key", p("a.key"), p("bundle.json")); code != exitFail || !strings.Contains(errOut, "already a signed bundle") {
		t.Errorf("signing a bundle again: %d %s", code, errOut)
	}
	if code, _, _ := ctl(t, "sign", "--key", p("a.pub"), p("policy.json")); code != exitFail {
		t.Error("signing with a trust file succeeded")
	}

	code, out, errOut := ctl(t, "verify", "--trust", p("a.pub"), p("bundle.json"), "--format", "text")
	if code != 0 || !strings.HasPrefix(out, "ok: ") || !strings.Contains(out, "\npolicy cli@2.0 sha256 ") || strings.Count(out, "(trusted)") != 2 {
		t.Fatalf("verify: %d\n%s%s", code, out, errOut)
	}
	// Into a pipe (or --format json): the same facts as JSON.
	code, out, errOut = ctl(t, "verify", "--trust", p("a.pub"), p("bundle.json"))
	var v verifiedBundle
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || !v.Verified || v.Mode != "hybrid" || v.Policy.Name != "cli" ||
		v.Policy.Version != "2.0" || len(v.Policy.SHA256) != 64 || len(v.Signatures) != 2 || !v.Signatures[0].Trusted || !v.Signatures[1].Trusted {
		t.Fatalf("verify (JSON): %d %v\n%s%s", code, err, out, errOut)
	}
	if code, out, _ := ctl(t, "verify", "--trust", p("a.pub"), "--print", p("bundle.json")); code != 0 ||
		out != `{"name":"cli","thresholds":{"inject":0.7},"version":"2.0"}`+"\n" {
		t.Errorf("verify --print: %d %q", code, out)
	}
	// Rotation: trusting the old and the new key, either bundle opens.
	if code, _, errOut := ctl(t, "verify", "--trust", p("b.pub"), "--trust", p("a.pub"), p("bundle.json")); code != 0 {
		t.Errorf("verify with two trust files: %s", errOut)
	}
	if code, _, errOut := ctl(t, "verify", "--trust", p("b.pub"), p("bundle.json")); code != exitFail || !strings.Contains(errOut, "signed by unknown ed25519 key") {
		t.Errorf("verify with the wrong trust file: %d %s", code, errOut)
	}
	write("tampered.json", strings.Replace(bundleJSON, `"inject":0.7`, `"inject":0.0`, 1))
	if code, _, errOut := ctl(t, "verify", "--trust", p("a.pub"), p("tampered.json")); code != exitFail || !strings.Contains(errOut, "does not verify") {
		t.Errorf("verify of a tampered bundle: %d %s", code, errOut)
	}
	if code, _, errOut := ctl(t, "verify", "--trust", p("a.pub"), p("policy.json")); code != exitFail || !strings.Contains(errOut, "policy is not signed") {
		t.Errorf("verify of a plain policy: %d %s", code, errOut)
	}
	if code, _, errOut := ctl(t, "verify", "--trust", p("a.pub"), "--min-version", "2.1", p("bundle.json")); code != exitFail || !strings.Contains(errOut, "older than the minimum") {
		t.Errorf("verify --min-version: %d %s", code, errOut)
	}
	if code, _, errOut := ctl(t, "verify", "--trust", p("ed.pub"), p("bundle.json")); code != exitFail {
		t.Errorf("hybrid bundle with only an ed25519 trust key (hybrid mode): %d %s", code, errOut)
	}
	if code, _, _ := ctl(t, "verify", "--trust", p("a.pub"), "--mode", "rsa", p("bundle.json")); code != exitUsage {
		t.Error("verify --mode rsa did not exit 2")
	}
	if code, _, _ := ctl(t, "verify", p("bundle.json")); code != exitUsage {
		t.Error("verify without --trust did not exit 2")
	}

	// Receipts: what the runner would write, checked by the CLI.
	keys, err := signing.ReadPrivateKeys(p("a.key"))
	if err != nil {
		t.Fatal(err)
	}
	req, dec := `{"query":"q"}`, `{"action":"inject"}`
	write("request.json", req)
	write("decision.json", dec)
	receipt, err := signing.SignReceipt([]byte(req), []byte(dec), strings.Repeat("0", 64), time.Unix(1e9, 0), keys...)
	if err != nil {
		t.Fatal(err)
	}
	write("receipt.json", string(receipt))
	if code, out, errOut := ctl(t, "verify-receipt", "--format", "text", "--trust", p("a.pub"), "--request", p("request.json"), "--decision", p("decision.json"), p("receipt.json")); code != 0 || strings.Count(out, "(matches)") != 2 {
		t.Errorf("verify-receipt: %d %s %s", code, out, errOut)
	}
	code, out, errOut = ctl(t, "verify-receipt", "--trust", p("a.pub"), "--decision", p("decision.json"), p("receipt.json"))
	var r verifiedReceipt
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || !r.Verified || r.RequestChecked || !r.DecisionChecked ||
		r.Time != "2001-09-09T01:46:40Z" || r.PolicySHA256 != strings.Repeat("0", 64) {
		t.Errorf("verify-receipt (JSON): %d %v %s %s", code, err, out, errOut)
	}
	write("other.json", `{"query":"Q"}`)
	if code, _, errOut := ctl(t, "verify-receipt", "--trust", p("a.pub"), "--request", p("other.json"), p("receipt.json")); code != exitFail || !strings.Contains(errOut, "does not match") {
		t.Errorf("verify-receipt with another request: %d %s", code, errOut)
	}
	write("receipt2.json", strings.Replace(string(receipt), "2001-09-09T01:46:40Z", "2001-09-09T01:46:41Z", 1))
	if code, _, errOut := ctl(t, "verify-receipt", "--trust", p("a.pub"), p("receipt2.json")); code != exitFail || !strings.Contains(errOut, "does not verify") {
		t.Errorf("verify-receipt of a tampered receipt: %d %s", code, errOut)
	}
}
