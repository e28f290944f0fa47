package abitest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Module is one build of the filter.
type Module struct {
	Name string // "go" or "tinygo"
	Path string
	Wasm []byte
}

var (
	buildOnce sync.Once
	built     *Module
	buildErr  error
)

// BuildGo builds ./guest/envoy with the standard Go toolchain
// (GOOS=wasip1 GOARCH=wasm -buildmode=c-shared) into a temporary directory,
// once per test binary, so the tests always run the module of the current
// source. dir is the directory the test runs in (anywhere in the module).
func BuildGo() (*Module, error) {
	buildOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			buildErr = err
			return
		}
		out, err := os.MkdirTemp("", "ctxgate-envoy-")
		if err != nil {
			buildErr = err
			return
		}
		path := filepath.Join(out, "envoy-filter.wasm")
		cmd := exec.Command(goTool(), "build", "-buildmode=c-shared", "-trimpath", "-o", path, "./guest/envoy")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if msg, err := cmd.CombinedOutput(); err != nil {
			buildErr = &BuildError{Output: string(msg), Err: err}
			return
		}
		wasm, err := os.ReadFile(path)
		if err != nil {
			buildErr = err
			return
		}
		built = &Module{Name: "go", Path: path, Wasm: wasm}
	})
	return built, buildErr
}

// TinyGoFlags are the flags of the TinyGo build of the filter: build.sh's
// flags for the Extism guest, which docs/build.md measures.
var TinyGoFlags = []string{"-target", "wasip1", "-buildmode=c-shared", "-no-debug", "-scheduler=none",
	"-opt=z", "-gc=precise", "-panic=trap"}

// ErrNoTinyGo means no TinyGo toolchain was found.
var ErrNoTinyGo = errors.New("no tinygo: set TINYGO, put it on PATH, or run scripts/install-tinygo.sh")

var (
	tinyOnce sync.Once
	tiny     *Module
	tinyErr  error
)

// BuildTinyGo builds ./guest/envoy with TinyGo. A TinyGo build takes about
// half a minute, so the module is cached in the user cache directory under a
// hash of the toolchain, the flags and every source file it is built from.
func BuildTinyGo() (*Module, error) {
	tinyOnce.Do(func() { tiny, tinyErr = buildTinyGo() })
	return tiny, tinyErr
}

func buildTinyGo() (*Module, error) {
	tool := findTinyGo()
	if tool == "" {
		return nil, ErrNoTinyGo
	}
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	ver, err := exec.Command(tool, "version").Output()
	if err != nil {
		return nil, err
	}
	key, err := sourceHash(root, string(ver)+strings.Join(TinyGoFlags, " "))
	if err != nil {
		return nil, err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	path := filepath.Join(cache, "ctxgate", "envoy-filter-tinygo-"+key[:20]+".wasm")
	if wasm, err := os.ReadFile(path); err == nil {
		return &Module{Name: "tinygo", Path: path, Wasm: wasm}, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	args := append([]string{"build"}, TinyGoFlags...)
	cmd := exec.Command(tool, append(args, "-o", tmp, "./guest/envoy")...)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return nil, &BuildError{Output: string(msg), Err: err}
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	// Keep one cached build: older ones are of sources that are gone.
	if old, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "envoy-filter-tinygo-*.wasm")); len(old) > 1 {
		for _, f := range old {
			if f != path {
				os.Remove(f)
			}
		}
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &Module{Name: "tinygo", Path: path, Wasm: wasm}, nil
}

func findTinyGo() string {
	if p := os.Getenv("TINYGO"); p != "" {
		return p
	}
	if p, err := exec.LookPath("tinygo"); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		if p := filepath.Join(home, ".cache", "ctxgate", "tinygo-0.42.0", "bin", "tinygo"); fileExists(p) {
			return p
		}
	}
	return ""
}

// sourceHash hashes salt and every file the filter module is built from.
func sourceHash(root, salt string) (string, error) {
	h := sha256.New()
	h.Write([]byte(salt))
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	for _, dir := range []string{"gate", "policies", "guest/envoy"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if strings.HasSuffix(p, "_test.go") || !(strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".json")) {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write([]byte(p))
			h.Write(b)
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// BuildError carries the compiler's output.
type BuildError struct {
	Output string
	Err    error
}

func (e *BuildError) Error() string { return e.Err.Error() + "\n" + e.Output }

func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if fileExists(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

func sortStrings(s []string) { sort.Strings(s) }
