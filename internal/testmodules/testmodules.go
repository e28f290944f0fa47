// Package testmodules loads the built guest modules for tests, the same way
// in every package that tests through them (host, host/server, the CLI).
package testmodules

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxgate/ctxgate/internal/testenv"
)

// Module is a built guest module. host.Module satisfies it; it is an
// interface so that host's own tests can use this package without an import
// cycle.
type Module interface {
	File() string
	Bytes() ([]byte, error)
	String() string
}

// Override returns where file would be in CTXGATE_WASM_DIR (modules built
// elsewhere, for example by CI), and whether that variable is set.
func Override(file string) (string, bool) {
	dir := os.Getenv("CTXGATE_WASM_DIR")
	if dir == "" {
		return "", false
	}
	return filepath.Join(dir, file), true
}

// NotBuilt ends a test whose module is not built: it skips, except under
// CI=true, where a test that silently skips the product would be a false
// green.
func NotBuilt(t testing.TB, name string, err error) {
	t.Helper()
	testenv.Missing(t, name+" module not built (run make build): "+err.Error())
}

// Bytes returns the bytes of m: from CTXGATE_WASM_DIR when it holds m, else
// the embedded module. A module that is not built ends the test (NotBuilt).
func Bytes(t testing.TB, m Module) []byte {
	t.Helper()
	if p, ok := Override(m.File()); ok {
		if b, err := os.ReadFile(p); err == nil {
			return b
		}
	}
	b, err := m.Bytes()
	if err != nil {
		NotBuilt(t, m.String(), err)
	}
	return b
}
