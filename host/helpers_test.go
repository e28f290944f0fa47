package host

import (
	"context"
	"testing"

	"github.com/ctxgate/ctxgate/internal/testmodules"
)

// newHostileGate runs the hostile guest with opts and closes it after the test.
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

// builtModule returns the bytes of a real module for tests (see
// internal/testmodules: CTXGATE_WASM_DIR, skip or fail under CI=true).
func builtModule(t testing.TB, m Module) []byte {
	t.Helper()
	return testmodules.Bytes(t, m)
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

// checksIf is InterruptAlways when on, else InterruptNever: benchmarks that
// time a module both ways say which they want, whatever the default.
func checksIf(on bool) Interrupt {
	if on {
		return InterruptAlways
	}
	return InterruptNever
}
