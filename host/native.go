package host

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/bundle"
)

// Native runs the core directly, without Wasm, behind the same interface as
// Gate: for the CLI's --native flag, for comparison benchmarks and for the
// parity tests that prove both give the same bytes. Safe for concurrent use.
type Native struct {
	policy   []byte
	defaults gate.Defaults // the score conventions of requests that state none
	engines  sync.Pool     // *gate.Engine: an Engine reuses scratch buffers, so one per goroutine
	closed   atomic.Bool
}

// NewNative validates the policy (empty: the built-in default) and returns a
// native gate. A bad policy is a *GateError with code bad_policy.
func NewNative(policy []byte) (*Native, error) {
	return newNative(policy, gate.Defaults{})
}

func newNative(policy []byte, d gate.Defaults) (*Native, error) {
	n := &Native{policy: append([]byte(nil), policy...), defaults: d}
	e, err := n.newEngine()
	if err != nil {
		return nil, err
	}
	n.engines.Put(e)
	return n, nil
}

// NewNativeOptions is the native gate of what New would run for o: its
// policy (a signed bundle verified with TrustKeys and TrustMode, as the
// module does) and its score conventions (VectorMetric, RerankScale). The
// options only Wasm has (module, pool, memory, deadline) do not apply.
func NewNativeOptions(o Options) (*Native, error) {
	if _, err := o.withDefaults(); err != nil {
		return nil, err
	}
	policy, err := bundle.Resolve(o.Policy, o.TrustKeys, trustModeConfig(o.TrustMode), "policy", "trust_keys", "trust_mode")
	if err != nil {
		return nil, fromGateError(err)
	}
	return newNative(policy, gate.Defaults{VectorMetric: o.VectorMetric, RerankScale: o.RerankScale})
}

// NewNativeTrusted is NewNative for a policy that may be a signed bundle:
// trustKeys (the JSON the guests read as trust_keys) and mode are applied
// with the same rules the Wasm guest applies inside its sandbox
// (bundle.Resolve), so the native path accepts and refuses exactly what the
// module does.
func NewNativeTrusted(policy, trustKeys []byte, mode bundle.Mode) (*Native, error) {
	policy, err := bundle.Resolve(policy, trustKeys, trustModeConfig(mode), "policy", "trust_keys", "trust_mode")
	if err != nil {
		return nil, fromGateError(err)
	}
	return NewNative(policy)
}

func (n *Native) engine() (*gate.Engine, error) {
	if e, ok := n.engines.Get().(*gate.Engine); ok {
		return e, nil
	}
	return n.newEngine()
}

// newEngine makes an engine for n's policy and score conventions.
func (n *Native) newEngine() (*gate.Engine, error) {
	e, err := gate.NewEngine(n.policy)
	if err == nil {
		err = e.SetDefaults(n.defaults)
	}
	if err != nil {
		return nil, fromGateError(err)
	}
	return e, nil
}

// run lends fn an engine. The core promises never to panic; if it breaks
// that promise, the native path reports ErrTrap (as the module would trap)
// and drops the engine, rather than taking the whole host down.
func (n *Native) run(ctx context.Context, name string, fn func(*gate.Engine) ([]byte, error)) (out []byte, err error) {
	if n.closed.Load() {
		return nil, ErrClosed
	}
	if ctx.Err() != nil {
		return nil, newTimeout(ctx)
	}
	e, err := n.engine()
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, &trapError{fn: name, cause: fmt.Errorf("core panicked: %v", r)}
		}
	}()
	out, err = fn(e)
	if err != nil {
		n.engines.Put(e)
		return nil, fromGateError(err)
	}
	// The engine may reuse its output buffer on the next call, and the next
	// call may be another goroutine's: the caller gets its own copy.
	out = append([]byte(nil), out...)
	n.engines.Put(e)
	return out, nil
}

// Evaluate decides one request.
func (n *Native) Evaluate(ctx context.Context, request []byte) ([]byte, error) {
	return n.run(ctx, "evaluate", func(e *gate.Engine) ([]byte, error) { return e.Evaluate(request) })
}

// Validate checks a model's answer.
func (n *Native) Validate(ctx context.Context, answer []byte) ([]byte, error) {
	return n.run(ctx, "validate", func(e *gate.Engine) ([]byte, error) { return e.Validate(answer) })
}

// Describe reports the version and the policy.
func (n *Native) Describe(ctx context.Context) ([]byte, error) {
	return n.run(ctx, "describe", func(e *gate.Engine) ([]byte, error) { return e.Describe(), nil })
}

// Close makes later calls return ErrClosed.
func (n *Native) Close(context.Context) error {
	n.closed.Store(true)
	return nil
}
