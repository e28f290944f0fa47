package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ctxgate/ctxgate/internal/testmodules"
)

// cacheDir is one compilation cache for the whole test binary: each CLI call
// builds a fresh Gate, and compiling the Go module every time would dominate.
var cacheDir string

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		// The test binary standing in for the built CLI (serveProcess).
		limitAddressSpace()
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	d, err := os.MkdirTemp("", "ctxgate-cli-test-")
	if err != nil {
		panic(err)
	}
	cacheDir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// maxAddressSpaceEnv caps a child's address space (RLIMIT_AS, bytes): a
// test that may drive the server to read without bound makes it fail with
// "out of memory" instead of taking the machine's memory.
const maxAddressSpaceEnv = "CTXGATE_TEST_RLIMIT_AS"

func limitAddressSpace() {
	n, err := strconv.ParseUint(os.Getenv(maxAddressSpaceEnv), 10, 64)
	if err != nil {
		return
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
		panic(err)
	}
}

// cli runs the CLI in-process.
func cli(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestDispatch(t *testing.T) {
	if code, _, errs := cli(t, ""); code != exitUsage || !strings.Contains(errs, "commands:") {
		t.Errorf("no arguments: exit %d, stderr %q", code, errs)
	}
	code, out, _ := cli(t, "", "help")
	if code != exitOK {
		t.Errorf("help: exit %d", code)
	}
	for _, name := range []string{"eval", "validate", "version"} {
		if !strings.Contains(out, "\n  "+name+" ") {
			t.Errorf("help does not list %s:\n%s", name, out)
		}
	}
	if code, _, errs := cli(t, "", "frobnicate"); code != exitUsage || !strings.Contains(errs, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: exit %d, stderr %q", code, errs)
	}
}

// Every registered command has a name, a one-line help and answers -h.
func TestCommandsRegistered(t *testing.T) {
	for name, c := range commands {
		if c.name != name || c.help == "" || strings.Contains(c.help, "\n") || c.run == nil {
			t.Errorf("command %q is malformed: %+v", name, c)
		}
		if code, _, _ := cli(t, "", name, "-h"); code != exitOK {
			t.Errorf("%s -h: exit %d", name, code)
		}
	}
}

// wasmFlags returns the flags that select module m for the CLI: the
// embedded module, or one from CTXGATE_WASM_DIR. A module that is not built
// ends the test (testmodules.NotBuilt).
func wasmFlags(t *testing.T, module string) []string {
	t.Helper()
	file := map[string]string{"tinygo": "ctxgate.wasm", "go": "ctxgate-go.wasm"}[module]
	if p, ok := testmodules.Override(file); ok && fileExists(p) {
		return []string{"--wasm", p, "--cache-dir", cacheDir}
	}
	if embedded := filepath.Join("..", "..", "host", "wasm", file); !fileExists(embedded) {
		testmodules.NotBuilt(t, module, errors.New(embedded+" is missing or empty"))
	}
	return []string{"--module", module, "--cache-dir", cacheDir}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Size() > 0
}
