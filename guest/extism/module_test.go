//go:build !wasip1

package main

// These tests load the built modules (make build) into the real Extism host
// and check the contract every host relies on: the three exports exist, bad
// input comes back as the error JSON through the PDK's error channel (never a
// trap), and those bytes are exactly what the same plugin code gives natively.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ctxgate/ctxgate/guest/extism/internal/cases"
	"github.com/ctxgate/ctxgate/guest/extism/plugin"
	"github.com/ctxgate/ctxgate/internal/abi"
	"github.com/ctxgate/ctxgate/internal/testenv"
	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// builtModules are the two builds of this guest (build.sh writes them).
var builtModules = []struct{ name, file string }{
	{"tinygo", "ctxgate.wasm"},
	{"go", "ctxgate-go.wasm"},
}

var (
	cacheOnce sync.Once
	cache     wazero.CompilationCache
)

// moduleBytes reads a built module. A missing module skips the test on a
// developer machine (nothing built yet) but fails in CI, where `make test`
// builds first and a missing file means the build is broken.
func moduleBytes(t *testing.T, file string) []byte {
	t.Helper()
	path := filepath.Join("..", "..", "host", "wasm", file)
	b, err := os.ReadFile(path)
	if err != nil {
		testenv.Missing(t, path+" not built (run make build): "+err.Error())
	}
	return b
}

// newPlugin instantiates a module with the given Extism config. WASI is on
// because both builds are reactors whose _initialize the SDK calls only then.
func newPlugin(t testing.TB, wasm []byte, config map[string]string, maxPages uint32) *extism.Plugin {
	t.Helper()
	cacheOnce.Do(func() { cache = wazero.NewCompilationCache() })
	m := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}, Config: config}
	if maxPages > 0 {
		m.Memory = &extism.ManifestMemory{MaxPages: maxPages}
	}
	rc := wazero.NewRuntimeConfig().WithCompilationCache(cache)
	ctx := context.Background()
	p, err := extism.NewPlugin(ctx, m, extism.PluginConfig{EnableWasi: true, RuntimeConfig: rc}, nil)
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	return p
}

// call runs one export and returns (output, error JSON). A trap or any
// failure that is not the guest's own error JSON fails the test.
func call(t *testing.T, p *extism.Plugin, export string, input []byte) (out, errJSON []byte) {
	t.Helper()
	rc, out, err := p.Call(export, input)
	if err == nil {
		if rc != 0 {
			t.Fatalf("%s: exit %d with no error set", export, rc)
		}
		return out, nil
	}
	if strings.Contains(err.Error(), "wasm error") || rc == 0 {
		t.Fatalf("%s: trapped or failed outside the error channel (rc=%d): %v", export, rc, err)
	}
	checkErrorJSON(t, export, []byte(err.Error()))
	return nil, []byte(err.Error())
}

var knownCodes = map[string]bool{"bad_json": true, "bad_field": true, "limit": true, "bad_policy": true, "bad_answer": true}

// checkErrorJSON asserts the shape from docs/architecture.md.
func checkErrorJSON(t *testing.T, where string, b []byte) {
	t.Helper()
	var v struct {
		Error *struct {
			Code    string  `json:"code"`
			Message string  `json:"message"`
			Field   *string `json:"field"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || v.Error == nil {
		t.Fatalf("%s: not the error JSON (%v): %.200s", where, err, b)
	}
	if !knownCodes[v.Error.Code] {
		t.Errorf("%s: unknown error code %q", where, v.Error.Code)
	}
	if v.Error.Message == "" {
		t.Errorf("%s: empty error message", where)
	}
	if v.Error.Field == nil {
		t.Errorf("%s: no field member", where)
	}
}

// native runs the same plugin code without Wasm: the reference bytes.
func native(config map[string]string) *plugin.Plugin {
	return plugin.New(func(k string) (string, bool) {
		v, ok := config[k]
		return v, ok && v != ""
	})
}

func TestModuleExports(t *testing.T) {
	for _, m := range builtModules {
		t.Run(m.name, func(t *testing.T) {
			wasm := moduleBytes(t, m.file)
			ctx := context.Background()
			r := wazero.NewRuntime(ctx)
			defer r.Close(ctx)
			cm, err := r.CompileModule(ctx, wasm)
			if err != nil {
				t.Fatal(err)
			}
			// The Extism exports and the raw ones, with docs/abi.md's
			// signatures: the guest's directives spell internal/abi's names.
			const i32, i64 = api.ValueTypeI32, api.ValueTypeI64
			for name, sig := range map[string][2][]api.ValueType{
				abi.OpEvaluate.Name(): {nil, {i32}},
				abi.OpValidate.Name(): {nil, {i32}},
				abi.OpDescribe.Name(): {nil, {i32}},
				abi.ExportInitialize:  {nil, nil},
				abi.ExportVersion:     {nil, {i32}},
				abi.ExportInput:       {{i32}, {i32}},
				abi.ExportCall:        {{i32, i32}, {i64}},
			} {
				f, ok := cm.ExportedFunctions()[name]
				if !ok {
					t.Errorf("export %s missing", name)
					continue
				}
				if !slices.Equal(f.ParamTypes(), sig[0]) || !slices.Equal(f.ResultTypes(), sig[1]) {
					t.Errorf("export %s is %v -> %v, want %v -> %v", name, f.ParamTypes(), f.ResultTypes(), sig[0], sig[1])
				}
			}
			if _, ok := cm.ExportedMemories()[abi.ExportMemory]; !ok {
				t.Errorf("memory export %s missing", abi.ExportMemory)
			}
			// Only the Extism kernel and WASI preview 1: anything else would
			// make the module unloadable in the other hosts.
			var mods []string
			for _, f := range cm.ImportedFunctions() {
				mod, _, _ := f.Import()
				if mod != "extism:host/env" && mod != "wasi_snapshot_preview1" {
					mods = append(mods, mod)
				}
			}
			sort.Strings(mods)
			if len(mods) > 0 {
				t.Errorf("unexpected import modules: %v", mods)
			}
		})
	}
}

// badInputs are requests every host must survive with an error value.
func badInputs() []struct {
	name  string
	input []byte
} {
	huge := bytes.Repeat([]byte(" "), 4<<20)
	huge[0] = '{'
	huge[len(huge)-1] = '}'
	return []struct {
		name  string
		input []byte
	}{
		{"malformed", []byte(`{"query": "x", "chunks": [`)},
		{"empty", nil},
		{"wrong_type", []byte(`{"query": 5, "chunks": "none"}`)},
		{"not_object", []byte(`[1,2,3]`)},
		{"nul_bytes", []byte("{\"query\":\"a\x00b\"}")},
		{"invalid_utf8", []byte("{\"query\":\"\xff\xfe\"}")},
		{"huge", huge},
	}
}

func TestModuleBadInput(t *testing.T) {
	for _, m := range builtModules {
		t.Run(m.name, func(t *testing.T) {
			p := newPlugin(t, moduleBytes(t, m.file), nil, 0)
			ref := native(nil)
			for _, tc := range badInputs() {
				for _, export := range []string{"evaluate", "validate"} {
					out, errJSON := call(t, p, export, tc.input)
					var wantOut, wantErr []byte
					if export == "evaluate" {
						wantOut, wantErr = ref.Evaluate(tc.input)
					} else {
						wantOut, wantErr = ref.Validate(tc.input)
					}
					if errJSON == nil {
						t.Errorf("%s %s: accepted bad input, output %.200s", export, tc.name, out)
						continue
					}
					if wantErr == nil || !bytes.Equal(errJSON, wantErr) {
						t.Errorf("%s %s: module and native differ\nmodule: %s\nnative: %s (output %.100s)",
							export, tc.name, errJSON, wantErr, wantOut)
					}
				}
			}
			// The instance survives all of that: describe still answers
			// the same as natively.
			out, errJSON := call(t, p, "describe", nil)
			wantOut, wantErr := ref.Describe()
			if !bytes.Equal(out, wantOut) || !bytes.Equal(errJSON, wantErr) {
				t.Errorf("describe after errors: module (%s | %s), native (%s | %s)", out, errJSON, wantOut, wantErr)
			}
		})
	}
}

func TestModuleBadPolicy(t *testing.T) {
	config := map[string]string{abi.ConfigPolicy: `{"name": "broken", `}
	for _, m := range builtModules {
		t.Run(m.name, func(t *testing.T) {
			p := newPlugin(t, moduleBytes(t, m.file), config, 0)
			_, want := native(config).Describe()
			if want == nil {
				t.Fatal("native plugin accepted a truncated policy")
			}
			// Every export, repeatedly: the remembered policy error, never a trap.
			for i := 0; i < 3; i++ {
				for _, export := range []string{"describe", "evaluate", "validate"} {
					_, errJSON := call(t, p, export, []byte(`{}`))
					if !bytes.Equal(errJSON, want) {
						t.Errorf("%s call %d: got %s, want %s", export, i, errJSON, want)
					}
					if !bytes.Contains(errJSON, []byte(`"code":"bad_policy"`)) {
						t.Errorf("%s: want bad_policy, got %s", export, errJSON)
					}
				}
			}
		})
	}
}

// TestModuleSignedPolicy: bundle verification runs inside the sandbox and
// gives the same answer (engine or error bytes) as natively, in both builds.
func TestModuleSignedPolicy(t *testing.T) {
	for _, m := range builtModules {
		t.Run(m.name, func(t *testing.T) {
			wasm := moduleBytes(t, m.file)
			for _, tc := range cases.Signed(t) {
				p := newPlugin(t, wasm, tc.Config, 0)
				out, errJSON := call(t, p, "describe", nil)
				wantOut, wantErr := native(tc.Config).Describe()
				if !bytes.Equal(out, wantOut) || !bytes.Equal(errJSON, wantErr) {
					t.Errorf("%s: module (%s | %s), native (%s | %s)", tc.Name, out, errJSON, wantOut, wantErr)
				}
				if (tc.Field == "") != (errJSON == nil) {
					t.Errorf("%s: want load=%v, got %s", tc.Name, tc.Field == "", errJSON)
				}
			}
		})
	}
}

// TestModuleManyCalls is the guard against a garbage collector that never
// frees (TinyGo's -gc=leaking dies after a few thousand calls): memory is
// capped at 16 MiB and 1,000 calls each allocate a 32 KiB input copy, so a
// module that keeps its garbage runs out of memory and traps.
func TestModuleManyCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	input := append([]byte(`{"query":"`), bytes.Repeat([]byte("a"), 32<<10)...)
	input = append(input, `","chunks":[`...) // truncated on purpose: an error each time
	for _, m := range builtModules {
		t.Run(m.name, func(t *testing.T) {
			p := newPlugin(t, moduleBytes(t, m.file), nil, 256)
			var first []byte
			for i := 0; i < 1000; i++ {
				_, errJSON := call(t, p, "evaluate", input)
				if i == 0 {
					first = errJSON
				} else if !bytes.Equal(errJSON, first) {
					t.Fatalf("call %d: answer changed: %s vs %s", i, errJSON, first)
				}
			}
		})
	}
}
