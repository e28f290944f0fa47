package main

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/internal/testmodules"
)

// With HOME and XDG_CACHE_HOME unwritable, as in `docker run --read-only`
// or a pod with readOnlyRootFilesystem and no cache volume, the CLI still
// decides and serve still starts: the default compilation cache cannot be
// made, so the module compiles in memory, with one warning line. The
// binary (this test binary acting as the CLI) runs as a user would run it.
func TestReadOnlyHome(t *testing.T) {
	if embedded := filepath.Join("..", "..", "host", "wasm", "ctxgate.wasm"); !fileExists(embedded) {
		testmodules.NotBuilt(t, "tinygo", errors.New(embedded+" is missing or empty"))
	}
	home := t.TempDir()
	cache := filepath.Join(home, ".cache")
	os.Mkdir(cache, 0o755)
	command := readOnlyDirCommand(t, home)
	env := append(os.Environ(), runMainEnv+"=1", "HOME="+home, "XDG_CACHE_HOME="+cache)
	reqFile, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "requests", "default", "inject.json"))
	_, want, _ := cli(t, "", "eval", "--native", reqFile)

	eval := command("eval", reqFile)
	eval.Env = env
	var stdout, stderr bytes.Buffer
	eval.Stdout, eval.Stderr = &stdout, &stderr
	if err := eval.Run(); err != nil || stdout.String() != want {
		t.Fatalf("eval with a read-only home: %v\nstdout %s\nstderr %s\nwant %s", err, stdout.String(), stderr.String(), want)
	}
	checkOneCacheWarning(t, "eval", stderr.String(), cache)

	serve := command("serve", "--listen", "127.0.0.1:0")
	serve.Env = env
	base, serveErr := startServeCommand(t, serve)
	req, _ := os.ReadFile(reqFile)
	r, err := http.Post(base+"/v1/gate", "application/json", bytes.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || string(body)+"\n" != want {
		t.Fatalf("serve with a read-only home: %d %s\nwant %s", r.StatusCode, body, want)
	}
	checkOneCacheWarning(t, "serve", serveErr.String(), cache)
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("the read-only cache directory has %d entries", len(entries))
	}
}

// checkOneCacheWarning wants exactly one line about the cache in stderr.
func checkOneCacheWarning(t *testing.T, what, stderr, cache string) {
	t.Helper()
	n := 0
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "compilation cache") {
			n++
			if !strings.Contains(l, "level=WARN") || !strings.Contains(l, "compiling in memory") || !strings.Contains(l, cache) {
				t.Errorf("%s: cache warning %q", what, l)
			}
		}
	}
	if n != 1 {
		t.Errorf("%s: %d cache warnings, want 1:\n%s", what, n, stderr)
	}
}

// readOnlyDirCommand returns how to run the CLI so that dir cannot be
// written: for root, which permissions do not stop, in a mount namespace of
// its own where dir is bind-mounted read-only (the EROFS a read-only
// container gives); for anyone else, with dir's write permission removed.
func readOnlyDirCommand(t *testing.T, dir string) func(args ...string) *exec.Cmd {
	t.Helper()
	if os.Geteuid() != 0 {
		filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Chmod(p, 0o555) })
		t.Cleanup(func() {
			filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Chmod(p, 0o755) })
		})
		return func(args ...string) *exec.Cmd { return exec.Command(os.Args[0], args...) }
	}
	if out, err := exec.Command("unshare", "-m", "true").CombinedOutput(); err != nil {
		t.Skipf("root without a mount namespace (unshare -m: %v %s): no way to make a directory unwritable", err, out)
	}
	return func(args ...string) *exec.Cmd {
		return exec.Command("unshare", append([]string{"-m", "sh", "-c",
			`mount --bind -o ro "$0" "$0" && exec "$@"`, dir, os.Args[0]}, args...)...)
	}
}
