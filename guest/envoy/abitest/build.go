package abitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
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
