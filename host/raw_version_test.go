package host

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/internal/abi"
)

// rawStubModule is a hand-assembled module with the raw exports of
// docs/abi.md and nothing behind them: ctxgate_abi_version returns version,
// ctxgate_input gives address 16, ctxgate_call an empty result. withVersion
// false leaves ctxgate_abi_version out (a module from before it existed).
func rawStubModule(version int32, withVersion bool) []byte {
	const i32, i64 = 0x7f, 0x7e
	types := [][]byte{
		{0x60, 0, 1, i32},           // 0: () -> i32
		{0x60, 1, i32, 1, i32},      // 1: (i32) -> i32
		{0x60, 2, i32, i32, 1, i64}, // 2: (i32, i32) -> i64
	}
	body := func(c *code) []byte {
		b := append([]byte{0}, c.op(0x0b).b...) // no locals
		return append(uleb(uint64(len(b))), b...)
	}
	funcs := []struct {
		name string
		typ  byte
		body []byte
	}{
		{abi.ExportInput, 1, body(new(code).i32(16))},
		{abi.ExportCall, 2, body(new(code).i64(0))},
	}
	if withVersion {
		funcs = append(funcs, struct {
			name string
			typ  byte
			body []byte
		}{abi.ExportVersion, 0, body(new(code).i32(version))})
	}
	var m []byte
	m = append(m, 0, 'a', 's', 'm', 1, 0, 0, 0)
	sec := vec(len(types))
	for _, t := range types {
		sec = append(sec, t...)
	}
	m = section(m, 1, sec)
	sec = vec(len(funcs))
	for _, f := range funcs {
		sec = append(sec, f.typ)
	}
	m = section(m, 3, sec)
	m = section(m, 5, []byte{1, 0x00, 1}) // one memory, min 1 page
	sec = vec(len(funcs) + 1)
	for i, f := range funcs {
		sec = append(sec, str(f.name)...)
		sec = append(sec, 0x00, byte(i))
	}
	sec = append(sec, str(abi.ExportMemory)...)
	sec = append(sec, 0x02, 0)
	m = section(m, 7, sec)
	sec = vec(len(funcs))
	for _, f := range funcs {
		sec = append(sec, f.body...)
	}
	return section(m, 10, sec)
}

// New checks the module's raw ABI version at instantiation: the version
// this host speaks is accepted, any other is refused with an error that
// names both versions, and a module without the version export has no raw
// path.
func TestRawABIVersion(t *testing.T) {
	ctx := context.Background()
	g, err := New(ctx, Options{Wasm: rawStubModule(abi.Version, true), ABI: ABIRaw, PoolSize: 1})
	if err != nil {
		t.Fatalf("version %d: %v", abi.Version, err)
	}
	out, err := g.Describe(ctx)
	g.Close(ctx)
	if err != nil || len(out) != 0 {
		t.Fatalf("stub describe: %q, %v; want an empty result", out, err)
	}
	for _, v := range []int32{0, abi.Version + 1, -1} {
		for _, mode := range []ABI{ABIRaw, ABIAuto} {
			g, err := New(ctx, Options{Wasm: rawStubModule(v, true), ABI: mode, PoolSize: 1})
			if err == nil {
				g.Close(ctx)
				t.Errorf("%s: version %d accepted", mode, v)
				continue
			}
			want := "raw ABI version " + strconv.Itoa(int(v)) + " and this host speaks " + strconv.Itoa(abi.Version)
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: version %d: %v, want it to say %q", mode, v, err, want)
			}
		}
	}
	if g, err := New(ctx, Options{Wasm: rawStubModule(0, false), ABI: ABIRaw}); err == nil || !strings.Contains(err.Error(), abi.ExportVersion) {
		if g != nil {
			g.Close(ctx)
		}
		t.Errorf("ABIRaw on a module without %s: %v", abi.ExportVersion, err)
	}
}
