package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// newTestGate runs the hostile guest with opts and closes it after the test.
func newHostileGate(t testing.TB, opts Options) *Gate {
	t.Helper()
	opts.Wasm = hostileModule()
	g, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("New(hostile): %v", err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	return g
}

// builtModule returns the bytes of a real module for tests. CTXGATE_WASM_DIR
// points at modules built elsewhere; otherwise the embedded ones are used.
// A module that is not built skips the test, except under CI=true, where a
// test that silently skips the product would be a false green.
func builtModule(t testing.TB, m Module) []byte {
	t.Helper()
	if dir := os.Getenv("CTXGATE_WASM_DIR"); dir != "" {
		b, err := os.ReadFile(filepath.Join(dir, m.File()))
		if err == nil {
			return b
		}
	}
	b, err := m.Bytes()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s module: %v", m, err)
		}
		t.Skipf("%s module not built (run make build): %v", m, err)
	}
	return b
}

var realModules = []Module{ModuleTinyGo, ModuleGo}

// newRealGate runs the real module m with opts.
func newRealGate(t testing.TB, m Module, opts Options) *Gate {
	t.Helper()
	opts.Wasm = builtModule(t, m)
	g, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("New(%s): %v", m, err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	return g
}
