// Package filter is the ctxgate proxy-wasm HTTP filter: it gates the
// retrieved documents of OpenAI-compatible chat requests with the core engine
// (package gate) and checks the model's answers. guest/envoy is its main.
//
// The package is plain Go over the proxy-wasm SDK, so the same code runs
// natively under the SDK's proxytest host and compiled to Wasm in Envoy.
package filter

import (
	"github.com/proxy-wasm/proxy-wasm-go-sdk/proxywasm"
	"github.com/proxy-wasm/proxy-wasm-go-sdk/proxywasm/types"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// NewVMContext is the filter's entry point for proxywasm.SetVMContext.
func NewVMContext() types.VMContext { return &vmContext{} }

type vmContext struct{ types.DefaultVMContext }

func (*vmContext) NewPluginContext(uint32) types.PluginContext { return &plugin{} }

// plugin is one configured filter instance. Envoy runs one VM per worker
// thread and calls it from that thread only, so the engine (not safe for
// concurrent use) and the scratch buffer need no locking.
type plugin struct {
	types.DefaultPluginContext
	cfg      *Config
	engine   *gate.Engine
	stats    *stats
	body     []byte       // reused for the body being read (readBody)
	scratch  []byte       // reused for the spliced gate request
	system   []byte       // reused for the system message's text
	upstream []byte       // reused for the rewritten request body
	json     jsonx.Parser // reused to validate bodies (chat.ParseUsing)
}

// OnPluginStart validates the configuration and compiles the policy. Any
// problem fails the start with one log line, so Envoy refuses the config
// update (or the listener) instead of serving with a half-configured gate.
func (p *plugin) OnPluginStart(size int) types.OnPluginStartStatus {
	var data []byte
	if size > 0 {
		d, err := proxywasm.GetPluginConfiguration()
		if err != nil {
			proxywasm.LogCritical("ctxgate: cannot read the plugin configuration: " + err.Error())
			return types.OnPluginStartStatusFailed
		}
		data = d
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		proxywasm.LogCritical("ctxgate: " + err.Error())
		return types.OnPluginStartStatusFailed
	}
	policy, err := loadPolicy(cfg)
	if err != nil {
		proxywasm.LogCritical("ctxgate: plugin configuration: policy: " + err.Error())
		return types.OnPluginStartStatusFailed
	}
	eng, err := gate.NewEngine(policy)
	if err != nil {
		proxywasm.LogCritical("ctxgate: plugin configuration: policy: " + err.Error())
		return types.OnPluginStartStatusFailed
	}
	// The score conventions the gate applies to requests that state none
	// (a metric without cosine levels for a policy that reads them fails
	// here, naming vector_metric).
	if err := eng.SetDefaults(gate.Defaults{VectorMetric: cfg.VectorMetric, RerankScale: cfg.RerankScale}); err != nil {
		proxywasm.LogCritical("ctxgate: plugin configuration: " + err.Error())
		return types.OnPluginStartStatusFailed
	}
	p.cfg, p.engine = cfg, eng
	if p.stats == nil {
		p.stats = defineStats()
	}
	ref := eng.Ref()
	proxywasm.LogInfo("ctxgate: gating POST " + cfg.PathPrefix + " with policy " + ref.Name + "@" + ref.Version + " sha256:" + ref.SHA256)
	return types.OnPluginStartStatusOK
}

// loadPolicy returns the policy JSON to compile. A signed bundle (an object
// with a "ctxgate_bundle" member) is verified here, inside the sandbox,
// against trust_keys, and only the policy it carries (the canonical bytes
// that were signed) is compiled; a bundle is never read as a plain policy.
func loadPolicy(cfg *Config) ([]byte, error) {
	if len(cfg.Policy) == 0 {
		if len(cfg.TrustKeys) > 0 {
			return nil, &gate.Error{Code: gate.CodeBadPolicy, Field: "trust_keys", Message: "set, but no signed policy bundle is configured"}
		}
		return nil, nil
	}
	if !bundle.IsBundle(cfg.Policy) {
		if len(cfg.TrustKeys) > 0 {
			return nil, &gate.Error{Code: gate.CodeBadPolicy, Field: "policy", Message: "trust_keys are set, so the policy must be a signed bundle"}
		}
		return cfg.Policy, nil
	}
	if len(cfg.TrustKeys) == 0 {
		return nil, &gate.Error{Code: gate.CodeBadPolicy, Field: "trust_keys", Message: "the policy is a signed bundle; configure the keys it must verify against"}
	}
	trust, err := bundle.ParseTrust(cfg.TrustKeys)
	if err != nil {
		return nil, err
	}
	mode, err := bundle.ParseMode(cfg.SignatureMode)
	if err != nil {
		return nil, err
	}
	opts := bundle.Options{Trust: trust, Mode: mode}
	if cfg.PolicyExact {
		return bundle.OpenWith(cfg.Policy, opts)
	}
	v, err := jsonx.Parse(cfg.Policy, maxConfigDepth)
	if err != nil {
		return nil, err
	}
	return bundle.OpenValue(&v, opts)
}

func (p *plugin) NewHttpContext(uint32) types.HttpContext { return &stream{p: p} }

// bodyChunk is how much of a body one host call reads (readBody).
const bodyChunk = 16 << 10

// readBody reads a body of n bytes with get (the SDK's request or response
// body getter) into p.body, reused, bodyChunk bytes a call. The host puts
// what it returns into memory the SDK allocates afresh each call, and a
// whole megabyte body read at once would be a megabyte of garbage per
// request. TinyGo's collector scans the module's read-only data as roots,
// so a word there that reads as an address inside a garbage object keeps
// all of it alive for good; about 1,400 such words fall in a 48 MB heap,
// and megabyte bodies so kept doubled the filter's memory every few
// rounds of large requests. A chunk kept so costs bodyChunk bytes at most.
// The body is valid until the next call.
func (p *plugin) readBody(get func(start, max int) ([]byte, error), n int) ([]byte, error) {
	if n <= 0 {
		return get(0, n) // as one read: the host's answer for no body stands
	}
	b := p.body[:0]
	for len(b) < n {
		c, err := get(len(b), min(bodyChunk, n-len(b)))
		if err != nil {
			return nil, err
		}
		if len(c) == 0 {
			break // the host has less than it said: the caller checks the length
		}
		b = append(b, c...)
	}
	p.body = b
	return b, nil
}
