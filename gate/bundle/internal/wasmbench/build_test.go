package wasmbench

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctxgate/ctxgate/internal/testenv"
)

// A module is one guest built by one toolchain.
type module struct {
	name string // "go" or "tinygo"
	pkg  string // ./guest or ./baseline
}

// tinygo returns the TinyGo binary: $TINYGO, else the copy
// scripts/install-tinygo.sh caches, else "" (TinyGo cases are skipped).
func tinygo() string {
	if p := os.Getenv("TINYGO"); p != "" {
		return p
	}
	home, _ := os.UserHomeDir()
	p := filepath.Join(home, ".cache", "ctxgate", "tinygo-0.42.0", "bin", "tinygo")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}

// tinygoFlags are the flags of the shipped guests' size-optimised build.
var tinygoFlags = []string{"-target", "wasip1", "-no-debug", "-scheduler=none", "-opt=z", "-panic=trap"}

var (
	buildMu sync.Mutex
	built   = map[module]string{}
)

// build compiles a guest once per process and caches the module on disk,
// keyed by the sources of every non-standard package it links and the
// toolchain, because a TinyGo build of circl takes half a minute.
func build(t testing.TB, m module) []byte {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[m]; ok {
		return mustRead(t, p)
	}
	var tool string
	switch m.name {
	case "go":
		tool = "go"
	case "tinygo":
		if tool = tinygo(); tool == "" {
			testenv.Missing(t, "TinyGo not installed (run scripts/install-tinygo.sh or set $TINYGO)")
		}
	}
	key := sourceKey(t, m, tool)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "ctxgate", "wasmbench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, m.name+"-"+filepath.Base(m.pkg)+"-"+key+".wasm")
	if _, err := os.Stat(out); err != nil {
		tmp := out + ".tmp"
		var cmd *exec.Cmd
		if m.name == "go" {
			cmd = exec.Command("go", "build", "-trimpath", "-o", tmp, m.pkg)
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		} else {
			cmd = exec.Command(tool, append(append([]string{"build"}, tinygoFlags...), "-o", tmp, m.pkg)...)
		}
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building %s %s: %v\n%s", m.name, m.pkg, err, b)
		}
		if err := os.Rename(tmp, out); err != nil {
			t.Fatal(err)
		}
	}
	built[m] = out
	return mustRead(t, out)
}

func sourceKey(t testing.TB, m module, tool string) string {
	t.Helper()
	h := sha256.New()
	ver, err := exec.Command(tool, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", tool, err)
	}
	h.Write(ver)
	h.Write([]byte(strings.Join(tinygoFlags, " ")))
	list := exec.Command("go", "list", "-deps", "-f", `{{if not .Standard}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{end}}`, m.pkg)
	list.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", m.pkg, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, name := range f[1:] {
			h.Write([]byte(name))
			h.Write(mustRead(t, filepath.Join(f[0], name)))
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
