// Package plugin is the Extism guest's logic, kept out of package main so that
// it runs natively in tests: the PDK's host imports exist only inside a Wasm
// host. It does no I/O of its own; the host's config arrives through a lookup
// function.
package plugin

import (
	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/internal/abi"
)

// Plugin holds the one engine a module instance evaluates with. An Extism
// instance's config is fixed when the host creates it, so the engine is built
// once, at the first call, and reused; a bad policy is remembered the same way
// and returned by every call instead of trapping.
type Plugin struct {
	config func(key string) (string, bool)
	engine *gate.Engine
	err    error
	loaded bool
}

// New returns a plugin that reads its config through lookup (pdk.GetConfig in
// the module). Nothing is read until the first call.
func New(lookup func(key string) (string, bool)) *Plugin {
	return &Plugin{config: lookup}
}

// Engine builds the engine on first use and returns it, or the policy error.
func (p *Plugin) Engine() (*gate.Engine, error) {
	if !p.loaded {
		p.loaded = true
		p.engine, p.err = p.build()
		if p.err == nil && p.engine == nil {
			// A nil engine would be a nil dereference on the next line, and
			// a trap is exactly what this guest promises never to return.
			p.err = &gate.Error{Code: gate.CodeBadPolicy, Message: "no engine for this policy"}
		}
	}
	return p.engine, p.err
}

// build reads the config and makes the engine. The verification happens here,
// inside the sandbox, so a host cannot load a policy its keys did not sign.
func (p *Plugin) build() (*gate.Engine, error) {
	policy, _ := p.lookup(abi.ConfigPolicy)
	trust, _ := p.lookup(abi.ConfigTrustKeys)
	mode, _ := p.lookup(abi.ConfigTrustMode)
	policy, err := bundle.Resolve(policy, trust, string(mode), abi.ConfigPolicy, abi.ConfigTrustKeys, abi.ConfigTrustMode)
	if err != nil {
		return nil, err
	}
	e, err := gate.NewEngine(policy)
	if err != nil {
		return nil, err
	}
	// The host's score conventions, for every request that states none.
	metric, _ := p.lookup(abi.ConfigVectorMetric)
	scale, _ := p.lookup(abi.ConfigRerankScale)
	if err := e.SetDefaults(gate.Defaults{VectorMetric: gate.VectorMetric(metric), RerankScale: gate.RerankScale(scale)}); err != nil {
		return nil, err
	}
	return e, nil
}

func (p *Plugin) lookup(key string) ([]byte, bool) {
	if p.config == nil {
		return nil, false
	}
	s, ok := p.config(key)
	if !ok || s == "" {
		return nil, false
	}
	return []byte(s), true
}

// Evaluate decides a request: (decision JSON, nil) or (nil, error JSON).
func (p *Plugin) Evaluate(request []byte) (out, errJSON []byte) {
	e, err := p.Engine()
	if err != nil {
		return nil, ErrorJSON(err)
	}
	out, err = e.Evaluate(request)
	if err != nil {
		return nil, ErrorJSON(err)
	}
	return out, nil
}

// Validate checks an answer: (validation JSON, nil) or (nil, error JSON).
func (p *Plugin) Validate(answer []byte) (out, errJSON []byte) {
	e, err := p.Engine()
	if err != nil {
		return nil, ErrorJSON(err)
	}
	out, err = e.Validate(answer)
	if err != nil {
		return nil, ErrorJSON(err)
	}
	return out, nil
}

// Describe returns the version, schema version and policy of the engine, or
// the policy error (a host asking "what is loaded?" must learn that nothing
// valid is).
func (p *Plugin) Describe() (out, errJSON []byte) {
	e, err := p.Engine()
	if err != nil {
		return nil, ErrorJSON(err)
	}
	return e.Describe(), nil
}
