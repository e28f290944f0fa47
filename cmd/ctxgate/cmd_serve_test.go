package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/policies"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServe runs `ctxgate serve` in-process with a config file and flags,
// decides a request over HTTP, reloads on SIGHUP, and stops on SIGTERM
// with exit 0.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.json")
	def, _ := policies.Get("default")
	os.WriteFile(policy, def, 0o644)
	config := filepath.Join(dir, "ctxgate.yaml")
	os.WriteFile(config, []byte("listen: 127.0.0.1:1\npolicy: "+policy+"\nlimits:\n  gate_timeout: 2s\n"), 0o644)
	args := append([]string{"serve", "--config", config, "--listen", "127.0.0.1:0", "--reload-poll", "0",
		"--gap-log", filepath.Join(dir, "gaps.jsonl")}, wasmFlags(t, "tinygo")...)
	srv := startServe(t, args)
	base, stderr := srv.base, &srv.stderr
	req, _ := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", "default", "inject.json"))
	resp, err := http.Post(base+"/v1/gate", "application/json", bytes.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Ctxgate-Action") == "" {
		t.Fatalf("POST /v1/gate: %d %v", resp.StatusCode, resp.Header)
	}

	// SIGHUP reloads an edited policy.
	var p map[string]any
	json.Unmarshal(def, &p)
	p["version"] = "hup"
	b, _ := json.Marshal(p)
	os.WriteFile(policy, b, 0o644)
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	waitLog(t, stderr, "policy reloaded")

	stopServe(t, srv)
}

// waitLog waits until serve's log says want.
func waitLog(t *testing.T, stderr *lockedBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never said %q: %s", want, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stopServe sends SIGTERM and waits for exit 0.
func stopServe(t *testing.T, srv *serveProc) {
	t.Helper()
	if code := srv.stop(t); code != exitOK {
		t.Fatalf("exit %d after SIGTERM: %s", code, srv.stderr.String())
	}
}

// TestServeGapLogReopen: logrotate's default moves the gap log aside and
// sends SIGHUP; serve then writes new events to a new file at the path.
func TestServeGapLogReopen(t *testing.T) {
	dir := t.TempDir()
	gapLog := filepath.Join(dir, "gaps.jsonl")
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--reload-poll", "0", "--gap-log", gapLog}, wasmFlags(t, "tinygo")...)
	srv := startServe(t, args)
	base, stderr := srv.base, &srv.stderr
	refusal, _ := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", "default", "refuse_off_topic.json"))
	refuse := func() string {
		resp, err := http.Post(base+"/v1/gate", "application/json", bytes.NewReader(refusal))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.Header.Get("X-Ctxgate-Refusal") != "hard" {
			t.Fatalf("not a refusal: %d %v", resp.StatusCode, resp.Header)
		}
		return resp.Header.Get("X-Ctxgate-Decision-Id")
	}
	waitFor := func(path, id string) {
		deadline := time.Now().Add(10 * time.Second)
		for {
			b, _ := os.ReadFile(path)
			if strings.Contains(string(b), `"decision_id":"`+id+`"`) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never held decision %s: %q\n%s", path, id, b, stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	first := refuse()
	waitFor(gapLog, first)
	if err := os.Rename(gapLog, gapLog+".1"); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	waitLog(t, stderr, "gap log reopened")
	second := refuse()
	waitFor(gapLog, second)
	old, _ := os.ReadFile(gapLog + ".1")
	if strings.Contains(string(old), second) {
		t.Fatalf("the event after SIGHUP went to the renamed file")
	}
	stopServe(t, srv)
}

func TestServeUsage(t *testing.T) {
	if code, _, errs := cli(t, "", "serve", "extra"); code != exitUsage || !strings.Contains(errs, "unexpected argument") {
		t.Errorf("extra argument: exit %d %q", code, errs)
	}
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("colour: red\n"), 0o644)
	if code, _, errs := cli(t, "", "serve", "--config", cfg); code != exitFail || !strings.Contains(errs, "colour") {
		t.Errorf("bad config: exit %d %q", code, errs)
	}
	if code, _, errs := cli(t, "", "serve", "--module", "rust"); code != exitUsage || !strings.Contains(errs, "rust") {
		t.Errorf("bad module: exit %d %q", code, errs)
	}
	// Tracing settings are refused before anything starts.
	if code, _, errs := cli(t, "", "serve", "--tracing", "--tracing-protocol", "http/json"); code != exitUsage || !strings.Contains(errs, "http/json") {
		t.Errorf("bad tracing protocol: exit %d %q", code, errs)
	}
	if code, _, errs := cli(t, "", "serve", "--tracing", "--tracing-endpoint", "collector:4317"); code != exitUsage || !strings.Contains(errs, "collector:4317") {
		t.Errorf("bad tracing endpoint: exit %d %q", code, errs)
	}
}

// TestServeFailsClosed: serve never starts on the unsigned built-in default
// in place of a missing or empty policy when trust keys are set, and honours
// min_version from the flag and the config file.
func TestServeFailsClosed(t *testing.T) {
	dir := t.TempDir()
	signed, trust := signedPolicy(t, dir, "2.0")
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, nil, 0o644)
	config := filepath.Join(dir, "ctxgate.yaml")
	os.WriteFile(config, []byte("min_version: \"2.1\"\n"), 0o644)
	base := append([]string{"serve", "--listen", "127.0.0.1:0", "--reload-poll", "0"}, wasmFlags(t, "tinygo")...)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"trust without a policy", []string{"--trust", trust}, "signed bundle is required"},
		{"empty policy file", []string{"--policy", empty}, "is empty"},
		{"empty policy file with trust", []string{"--trust", trust, "--policy", empty}, "is empty"},
		{"min-version flag", []string{"--trust", trust, "--policy", signed, "--min-version", "10"}, "older than min_version 10"},
		{"min_version in the config", []string{"--config", config, "--trust", trust, "--policy", signed}, "older than min_version 2.1"},
	} {
		code, out, errs := cli(t, "", append(append([]string{}, base...), c.args...)...)
		if code != exitFail || strings.Contains(out, "listening") || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and %q", c.name, code, out, errs, c.want)
		}
	}
}
