package host

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/ctxgate/ctxgate/internal/abi"
	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
)

// Gate runs the guest module. It is safe for concurrent use: each call takes
// an instance from a pool and gives it back.
type Gate struct {
	compiled *extism.CompiledPlugin // the Extism path, or
	raw      *rawModule             // the raw path (raw.go); exactly one is set
	abi      ABI
	pool     *pool
	timeout  time.Duration
	maxInput int
	module   string
	// noInterrupt: the module has no termination checks, so the deadline is
	// checked around a run rather than enforced inside it.
	noInterrupt bool
	close       sync.Once
}

// New compiles the module once and makes Options.Prewarm instances. With a
// bad policy it returns the guest's *GateError (code bad_policy).
func New(ctx context.Context, opts Options) (*Gate, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	wasm, name := o.Wasm, "custom"
	if wasm == nil {
		if wasm, err = o.Module.Bytes(); err != nil {
			return nil, err
		}
		name = o.Module.String()
	}
	cache := compilationCache(o.CacheDir, o.Logger)
	config := map[string]string{}
	if len(o.Policy) > 0 {
		config[abi.ConfigPolicy] = string(o.Policy)
	}
	if len(o.TrustKeys) > 0 {
		config[abi.ConfigTrustKeys] = string(o.TrustKeys)
	}
	if m := trustModeConfig(o.TrustMode); m != "" {
		config["trust_mode"] = m
	}
	scoreConfig(config, &o)
	manifest := extism.Manifest{
		Wasm:   []extism.Wasm{extism.WasmData{Data: wasm}},
		Config: config,
		// Extism turns MaxPages into the runtime's per-memory page limit, which
		// caps the kernel's memory (input, output) and the guest's alike.
		Memory: &extism.ManifestMemory{MaxPages: o.MaxPages},
	}
	checks := o.checks()
	rc := wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		// Without this a guest in an endless loop ignores its deadline
		// (Options.Interrupt for its cost).
		WithCloseOnContextDone(checks)
	g := &Gate{timeout: o.Timeout, maxInput: o.MaxInputBytes, module: name, noInterrupt: !checks}
	if o.ABI != ABIExtism {
		raw, ok, err := compileRaw(ctx, wasm, rc, config, o.MaxPages)
		if err != nil {
			return nil, errors.New("ctxgate: compile " + name + " module: " + err.Error())
		}
		if !ok && o.ABI == ABIRaw {
			return nil, errors.New("ctxgate: the " + name + " module has no raw exports (" + abi.ExportVersion + ", " +
				abi.ExportInput + ", " + abi.ExportCall + ")")
		}
		g.raw, g.abi = raw, ABIRaw
	}
	if g.raw == nil {
		compiled, err := extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{RuntimeConfig: rc, EnableWasi: true}, nil)
		if err != nil {
			return nil, errors.New("ctxgate: compile " + name + " module: " + err.Error())
		}
		g.compiled, g.abi = compiled, ABIExtism
	}
	g.pool = newPool(o.PoolSize, g.newInstance)
	if err := g.prewarm(ctx, o.Prewarm); err != nil {
		g.Close(ctx)
		return nil, err
	}
	return g, nil
}

// newInstance instantiates the module and calls describe once. That runs a
// reactor's _initialize (Extism does it lazily on the first call; doing it
// here keeps it out of the first request's time) and makes the guest load
// its policy, so a bad policy surfaces now.
func (g *Gate) newInstance(ctx context.Context) (instance, error) {
	var in instance
	var err error
	if g.raw != nil {
		in, err = g.raw.instance(ctx)
	} else {
		in, err = newExtismInstance(ctx, g.compiled)
	}
	if err != nil {
		if g.pool.closed.Load() {
			return nil, ErrClosed
		}
		return nil, errors.New("ctxgate: instantiate " + g.module + " module: " + err.Error())
	}
	ctx, cancel := g.deadline(ctx)
	defer cancel()
	if _, err := in.call(ctx, abi.OpDescribe.Name(), nil); err != nil {
		in.close(context.Background())
		return nil, err
	}
	return in, nil
}

func (g *Gate) prewarm(ctx context.Context, n int) error {
	held := make([]instance, 0, n)
	var err error
	for range n {
		var in instance
		if in, err = g.pool.acquire(ctx); err != nil {
			break
		}
		held = append(held, in)
	}
	for _, in := range held {
		g.pool.release(in, true)
	}
	return err
}

// Evaluate decides one request. Errors: *GateError for bad input (the
// request or the policy), ErrTimeout, ErrTrap, ErrClosed.
func (g *Gate) Evaluate(ctx context.Context, request []byte) ([]byte, error) {
	return g.call(ctx, abi.OpEvaluate.Name(), request)
}

// Validate checks a model's answer against the tags it was offered.
func (g *Gate) Validate(ctx context.Context, answer []byte) ([]byte, error) {
	return g.call(ctx, abi.OpValidate.Name(), answer)
}

// Describe reports the gate's version and its policy's name and sha256.
func (g *Gate) Describe(ctx context.Context) ([]byte, error) {
	return g.call(ctx, abi.OpDescribe.Name(), nil)
}

// Module names the running module: "tinygo", "go" or "custom".
func (g *Gate) Module() string { return g.module }

// ABI is the call path in use: ABIRaw or ABIExtism (never ABIAuto).
func (g *Gate) ABI() ABI { return g.abi }

// Stats reports the instance pool.
func (g *Gate) Stats() Stats { return g.pool.stats() }

// Close releases every instance and the compiled module. Calls in flight end
// with ErrClosed; later calls return ErrClosed.
func (g *Gate) Close(ctx context.Context) error {
	var err error
	g.close.Do(func() {
		g.pool.close()
		if g.raw != nil {
			err = g.raw.close(ctx)
		} else {
			err = g.compiled.Close(ctx)
		}
	})
	return err
}

func (g *Gate) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if g.timeout > 0 {
		return context.WithTimeout(ctx, g.timeout)
	}
	return ctx, func() {}
}

// pastDeadline reports whether ctx is done or its deadline has passed. A
// context's timer sets Err from another goroutine, which on a busy machine
// may not have run yet when a run without termination checks returns late:
// the clock, not Err alone, says whether it was late.
func pastDeadline(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// late reports whether end, if set, has passed.
func late(end time.Time) bool { return !end.IsZero() && !time.Now().Before(end) }

func (g *Gate) call(ctx context.Context, fn string, input []byte) ([]byte, error) {
	if len(input) > g.maxInput {
		return nil, newGateError("limit", "", "input is "+strconv.Itoa(len(input))+
			" bytes; this host accepts at most "+strconv.Itoa(g.maxInput))
	}
	// Waiting for a free instance is bounded by the caller's context only:
	// Timeout is the sandbox's limit on a guest's run, not a latency budget.
	in, err := g.pool.acquire(ctx)
	if err != nil {
		return nil, err
	}
	// Without termination checks nothing stops a run, so Timeout is a time
	// to compare with around it, not a timer: context.WithTimeout cost a
	// timer and three allocations per call for nothing.
	runCtx, end := ctx, time.Time{}
	if !g.noInterrupt {
		var cancel context.CancelFunc
		runCtx, cancel = g.deadline(ctx)
		defer cancel()
	} else if g.timeout > 0 {
		end = time.Now().Add(g.timeout)
	}
	if pastDeadline(runCtx) || late(end) {
		// Already past the deadline: the guest never runs, so the instance
		// is still good.
		g.pool.release(in, true)
		return nil, newTimeout(runCtx)
	}
	out, err := in.call(runCtx, fn, input)
	var ge *GateError
	healthy := err == nil || errors.As(err, &ge)
	if g.noInterrupt && healthy && (pastDeadline(runCtx) || late(end)) {
		// Without termination checks the run was not stopped at the
		// deadline; it finished late, and the instance is fine.
		out, err = nil, newTimeout(runCtx)
	}
	g.pool.release(in, healthy)
	if !healthy && g.pool.closed.Load() {
		return nil, ErrClosed
	}
	return out, err
}
