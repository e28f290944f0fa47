package host

import (
	"context"
	"errors"
	"strconv"

	"github.com/ctxgate/ctxgate/internal/abi"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// ABI is how a Gate calls its module.
type ABI int

const (
	// ABIAuto uses the raw exports when the module has them (the bundled
	// modules do), else the Extism ABI. The default. A module whose raw
	// ABI version is not abi.Version is refused here too, when an instance
	// is made (by New, unless Prewarm is negative).
	ABIAuto ABI = iota
	// ABIExtism calls evaluate/validate/describe through the Extism SDK, as
	// every other Extism host does.
	ABIExtism
	// ABIRaw calls the raw exports of docs/abi.md directly over wazero
	// (raw.go); New fails if the module lacks them or speaks another raw
	// ABI version.
	ABIRaw
)

func (a ABI) String() string {
	switch a {
	case ABIAuto:
		return "auto"
	case ABIExtism:
		return "extism"
	case ABIRaw:
		return "raw"
	}
	return "ABI(" + strconv.Itoa(int(a)) + ")"
}

// rawModule is the module compiled for the raw path, in its own wazero
// runtime (with WASI and the kernel host module; raw instances are
// anonymous, so any number share it).
type rawModule struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	config   map[string]string
	maxBytes uint64
}

// compileRaw compiles wasm for the raw path. ok is false (and nothing is
// kept) when the module does not have the raw exports, all three with the
// signatures of docs/abi.md.
func compileRaw(ctx context.Context, wasm []byte, rc wazero.RuntimeConfig, config map[string]string, maxPages uint32) (m *rawModule, ok bool, err error) {
	rt := wazero.NewRuntimeWithConfig(ctx, rc.WithMemoryLimitPages(maxPages))
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		rt.Close(ctx)
		return nil, false, err
	}
	exports := compiled.ExportedFunctions()
	if !hasSignature(exports[abi.ExportVersion], 0, 1) || !hasSignature(exports[abi.ExportInput], 1, 1) ||
		!hasSignature(exports[abi.ExportCall], 2, 1) {
		rt.Close(ctx)
		return nil, false, nil
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, false, err
	}
	if err := instantiateKernel(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, false, err
	}
	return &rawModule{rt: rt, compiled: compiled, config: config, maxBytes: uint64(maxPages) * pageBytes}, true, nil
}

func hasSignature(f api.FunctionDefinition, params, results int) bool {
	return f != nil && len(f.ParamTypes()) == params && len(f.ResultTypes()) == results
}

func (m *rawModule) close(ctx context.Context) error { return m.rt.Close(ctx) }

// rawInstance is one guest called through its raw exports: the request is
// written straight into the guest's memory and the result read from it,
// with the functions looked up once. Per call that is two wazero calls and
// two copies, where the Extism path makes a host call per 8 bytes of input
// and output and looks every kernel function up by name.
type rawInstance struct {
	mod             api.Module
	mem             api.Memory
	inputFn, callFn api.Function
	kern            *kernel
	out             *tail
	stack           [2]uint64
	// The input buffer the guest last gave (ctxgate_input keeps its address
	// while later inputs fit), so a call that fits skips that export.
	inPtr, inCap uint32
}

func (m *rawModule) instance(ctx context.Context) (*rawInstance, error) {
	t := &tail{}
	// As on the Extism path: no clock, a fixed randomness source, no files,
	// no environment (wazero's defaults), output kept for trap messages.
	mc := wazero.NewModuleConfig().WithStdout(t).WithStderr(t).WithName("").WithStartFunctions()
	mod, err := m.rt.InstantiateModule(ctx, m.compiled, mc)
	if err != nil {
		return nil, err
	}
	x := &rawInstance{mod: mod, mem: mod.Memory(), inputFn: mod.ExportedFunction(abi.ExportInput),
		callFn: mod.ExportedFunction(abi.ExportCall), kern: newKernel(m.config, m.maxBytes), out: t}
	if x.mem == nil {
		mod.Close(ctx)
		return nil, errors.New("the module exports no memory")
	}
	// Both builds are reactors: _initialize sets up the runtime before any
	// export may run (the Extism SDK does this lazily at the first call).
	if init := mod.ExportedFunction(abi.ExportInitialize); init != nil {
		if _, err := init.Call(withKernel(ctx, x.kern)); err != nil {
			err = x.classify(ctx, abi.ExportInitialize, err)
			mod.Close(ctx)
			return nil, err
		}
	}
	if err := x.checkVersion(ctx); err != nil {
		mod.Close(ctx)
		return nil, err
	}
	return x, nil
}

// checkVersion refuses a module whose raw ABI is not the one this host
// speaks: its ops or result packing may mean something else, and a misread
// result is a silently wrong decision. The module is the wrong build, so
// this is not a trap (a new instance would say the same).
func (x *rawInstance) checkVersion(ctx context.Context) error {
	res, err := x.mod.ExportedFunction(abi.ExportVersion).Call(withKernel(ctx, x.kern))
	if err != nil {
		return x.classify(ctx, abi.ExportVersion, err)
	}
	if v := int32(res[0]); v != abi.Version {
		return errors.New("the module speaks raw ABI version " + strconv.Itoa(int(v)) + " and this host speaks " +
			strconv.Itoa(abi.Version) + " (docs/abi.md); build the module and the host from one checkout, or use ABIExtism")
	}
	return nil
}

func (x *rawInstance) call(ctx context.Context, fn string, input []byte) ([]byte, error) {
	op, ok := abi.OpNamed(fn)
	if !ok {
		return nil, &trapError{fn: fn, cause: errors.New("no such export")}
	}
	x.out.reset()
	x.kern.reset()
	ctx = withKernel(ctx, x.kern)
	s := x.stack[:]
	if x.inPtr == 0 || uint32(len(input)) > x.inCap {
		s[0] = uint64(len(input))
		if err := x.inputFn.CallWithStack(ctx, s); err != nil {
			return nil, x.classify(ctx, fn, err)
		}
		x.inPtr, x.inCap = uint32(s[0]), uint32(len(input))
	}
	if x.inPtr == 0 || !x.mem.Write(x.inPtr, input) {
		return nil, x.trap(fn, errors.New("ctxgate_input gave no room for "+strconv.Itoa(len(input))+" bytes"))
	}
	s[0], s[1] = uint64(op), uint64(len(input))
	if err := x.callFn.CallWithStack(ctx, s); err != nil {
		return nil, x.classify(ctx, fn, err)
	}
	ptr, n, isErr := abi.Unpack(s[0])
	view, ok := x.mem.Read(ptr, n)
	if !ok {
		return nil, x.trap(fn, errors.New("result outside guest memory"))
	}
	// view aliases guest memory, which the next call overwrites.
	out := append([]byte(nil), view...)
	if !isErr {
		return out, nil
	}
	if ge, ok := parseGuestError(string(out)); ok {
		return nil, ge
	}
	return nil, x.trap(fn, errors.New("guest error is not the error JSON: "+strconv.Quote(string(out))))
}

// classify turns a failed wazero call into ErrTimeout or a trap, as the
// Extism path does.
func (x *rawInstance) classify(ctx context.Context, fn string, err error) error {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded, sys.ExitCodeContextCanceled:
			return newTimeout(ctx)
		}
	} else if ctx.Err() != nil {
		return newTimeout(ctx)
	}
	return x.trap(fn, err)
}

func (x *rawInstance) trap(fn string, err error) error {
	if s := x.out.String(); s != "" {
		err = errors.New(err.Error() + "\nguest output: " + s)
	}
	return &trapError{fn: fn, cause: err}
}

func (x *rawInstance) close(ctx context.Context) error { return x.mod.Close(ctx) }
