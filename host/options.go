package host

import (
	"errors"
	"log/slog"
	"runtime"
	"strconv"
	"time"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/gate/wire"
	"github.com/ctxgate/ctxgate/internal/abi"
)

// Options configure a Gate. The zero value is usable: the TinyGo module, the
// built-in default policy, one instance per CPU, a 1 s deadline per call and
// a 64 MiB memory cap.
type Options struct {
	// Module picks an embedded build. Ignored when Wasm is set.
	Module Module
	// Wasm is a module to run instead of an embedded one (any guest exporting
	// evaluate, validate and describe through the Extism ABI).
	Wasm []byte

	// Policy is the policy JSON, or a signed bundle (then TrustKeys must name
	// the keys it may be signed with). Empty selects the built-in default,
	// except with TrustKeys: then New fails (the default is not signed).
	Policy    []byte
	TrustKeys []byte
	// TrustMode is the signatures a bundle needs: bundle.Hybrid (the zero
	// value: Ed25519 and ML-DSA-65), bundle.Ed25519Only or
	// bundle.MLDSA65Only, for single-scheme keys. It needs TrustKeys.
	TrustMode bundle.Mode

	// VectorMetric and RerankScale are the score conventions of every
	// request that states none (docs/decision.md): the guest applies them,
	// so no request is rewritten. Empty: cosine, and the rule by value.
	VectorMetric gate.VectorMetric
	RerankScale  gate.RerankScale

	// PoolSize is the most instances that may exist, and so the most calls
	// that run at once; more callers wait (bounded by their context).
	// Default GOMAXPROCS.
	PoolSize int
	// Prewarm instances are made (and the policy checked) by New. Default 1,
	// so a bad policy fails New rather than the first request; negative: none.
	Prewarm int
	// Timeout bounds each run of the guest, on top of the caller's context.
	// Default 1 s; negative means only the caller's context bounds a run.
	// Waiting for a free instance is bounded by the caller's context alone.
	Timeout time.Duration
	// MaxPages caps each linear memory of an instance, in 64 KiB pages.
	// Default 1024 (64 MiB). A guest that needs more traps and is replaced.
	MaxPages uint32
	// MaxInputBytes rejects larger inputs before they reach a guest, with a
	// "limit" GateError. Default 8 MiB. At most a quarter of the memory cap,
	// so the input, the guest's copy of it and its output always fit.
	MaxInputBytes int
	// CacheDir keeps compiled machine code across processes. Empty: an
	// in-memory cache shared by every Gate in the process. A directory that
	// cannot be created or written falls back to that in-memory cache, with
	// one warning to Logger (cache.go).
	CacheDir string
	// Logger receives the host's warnings. Default slog.Default().
	Logger *slog.Logger
	// ABI picks the call path: ABIAuto (the default) uses the module's raw
	// exports when it has them, else the Extism ABI (docs/performance.md).
	ABI ABI
	// Interrupt says whether a deadline can stop a running guest
	// (interrupt.go). The default, InterruptAuto, stops a module given in
	// Wasm and lets the bundled modules, whose every run ends, run without
	// the checks that cost 4-8x.
	Interrupt Interrupt
}

const (
	defaultTimeout  = time.Second
	defaultMaxPages = 1024
	defaultMaxInput = DefaultMaxInputBytes
	pageBytes       = 64 << 10
)

// withDefaults fills zero fields and checks the rest.
func (o Options) withDefaults() (Options, error) {
	if o.PoolSize == 0 {
		o.PoolSize = runtime.GOMAXPROCS(0)
	}
	if o.Prewarm == 0 {
		o.Prewarm = 1
	} else if o.Prewarm < 0 {
		o.Prewarm = 0
	}
	if o.Timeout == 0 {
		o.Timeout = defaultTimeout
	}
	if o.MaxPages == 0 {
		o.MaxPages = defaultMaxPages
	}
	if o.MaxInputBytes == 0 {
		o.MaxInputBytes = defaultMaxInput
	}
	switch {
	case o.PoolSize < 0:
		return o, errors.New("ctxgate: Options.PoolSize is negative")
	case o.Prewarm > o.PoolSize:
		return o, errors.New("ctxgate: Options.Prewarm is more than PoolSize (" + strconv.Itoa(o.PoolSize) + ")")
	case o.MaxPages > 65536:
		return o, errors.New("ctxgate: Options.MaxPages is above 65536 (4 GiB)")
	case o.Interrupt < InterruptAuto || o.Interrupt > InterruptNever:
		return o, errors.New("ctxgate: Options.Interrupt is not one of InterruptAuto, InterruptAlways, InterruptNever")
	case o.ABI < ABIAuto || o.ABI > ABIRaw:
		return o, errors.New("ctxgate: Options.ABI is not one of ABIAuto, ABIExtism, ABIRaw")
	case o.TrustMode > bundle.MLDSA65Only:
		return o, errors.New("ctxgate: Options.TrustMode is not one of bundle.Hybrid, bundle.Ed25519Only, bundle.MLDSA65Only")
	case o.TrustMode != bundle.Hybrid && len(o.TrustKeys) == 0:
		return o, errors.New("ctxgate: Options.TrustMode is " + o.TrustMode.String() + " but there are no TrustKeys: nothing would be verified")
	case !knownMetric(o.VectorMetric):
		return o, errors.New("ctxgate: Options.VectorMetric is " + strconv.Quote(string(o.VectorMetric)) + ", not one of " + metricList())
	case !knownScale(o.RerankScale):
		return o, errors.New("ctxgate: Options.RerankScale is " + strconv.Quote(string(o.RerankScale)) + ", not probability or logit")
	case o.MaxInputBytes < 0:
		return o, errors.New("ctxgate: Options.MaxInputBytes is negative")
	case int64(o.MaxInputBytes) > int64(o.MaxPages)*pageBytes/4:
		return o, errors.New("ctxgate: Options.MaxInputBytes is more than a quarter of the memory cap (MaxPages*64KiB/4 = " +
			strconv.FormatInt(int64(o.MaxPages)*pageBytes/4, 10) + " bytes)")
	}
	return o, nil
}

// DefaultMaxInputBytes is Options.MaxInputBytes when unset. Front ends (the
// CLI, the server) read at most this much, so an oversized body is refused
// before it is held in memory.
const DefaultMaxInputBytes = 8 << 20

// trustModeConfig is the trust_mode config value the guests read for m:
// empty for hybrid, so a host that never sets a mode passes no new key.
func trustModeConfig(m bundle.Mode) string {
	if m == bundle.Hybrid {
		return ""
	}
	return m.String()
}

// knownMetric and knownScale report whether a score convention is empty
// (the default) or one the gate knows.
func knownMetric(m gate.VectorMetric) bool {
	_, ok := wire.ParseVectorMetric(string(m))
	return ok || m == ""
}

func knownScale(r gate.RerankScale) bool {
	_, ok := wire.ParseRerankScale(string(r))
	return ok || r == ""
}

// metricList names the metrics for an error.
func metricList() string {
	s := ""
	for i, m := range wire.VectorMetrics {
		if i > 0 {
			s += ", "
		}
		s += string(m)
	}
	return s
}

// scoreConfig adds the guests' config keys for o's score conventions.
func scoreConfig(config map[string]string, o *Options) {
	if o.VectorMetric != "" {
		config[abi.ConfigVectorMetric] = string(o.VectorMetric)
	}
	if o.RerankScale != "" {
		config[abi.ConfigRerankScale] = string(o.RerankScale)
	}
}
