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
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "policy reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("no reload after SIGHUP: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	if code := srv.stop(t); code != exitOK {
		t.Fatalf("exit %d after SIGTERM: %s", code, stderr.String())
	}
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
}
