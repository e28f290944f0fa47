// Package abi is the raw ABI of the ctxgate guest module, written once: the
// export names, the op codes of ctxgate_call, the packing of its result, the
// config keys and the ABI version. The guest (guest/extism) and the Go host
// (host/raw.go) both import it; docs/abi.md describes the same contract for
// hosts in other languages.
//
// It is pure Go with no imports, so it builds under TinyGo inside the guest.
package abi

// Version is what the module's ctxgate_abi_version export returns. It
// changes only when a host written for the previous version would misread
// the module: an export's signature or meaning, an op code, the result
// packing, the memory rules or the config keys. Additions such a host never
// uses (a new op, a new export) keep it; docs/abi.md lists them.
const Version = 1

// The raw exports. The guest's //go:wasmexport directives must spell these
// as literals; the module tests check the built modules against this list.
const (
	// ExportVersion is `ctxgate_abi_version() -> i32`: Version.
	ExportVersion = "ctxgate_abi_version"
	// ExportInput is `ctxgate_input(n i32) -> i32`: the address of n
	// writable bytes for the next call's input, or 0 when n is negative.
	ExportInput = "ctxgate_input"
	// ExportCall is `ctxgate_call(op i32, n i32) -> i64`: runs op over the
	// first n input bytes and returns the packed result (Pack).
	ExportCall = "ctxgate_call"
	// ExportInitialize is the reactor's start function, called once before
	// any other export.
	ExportInitialize = "_initialize"
	// ExportMemory is the guest's linear memory, which holds the input and
	// the result.
	ExportMemory = "memory"
)

// Config keys, read by the guest through the Extism kernel's config_get
// (on the raw path too, once, at the first call).
const (
	// ConfigPolicy holds the policy JSON, or a signed policy bundle when
	// ConfigTrustKeys is set. Absent or empty selects the built-in default.
	ConfigPolicy = "policy"
	// ConfigTrustKeys holds the trusted public keys (gate/bundle). When set,
	// only a bundle they sign is loaded.
	ConfigTrustKeys = "trust_keys"
	// ConfigTrustMode is the signatures a bundle needs: "hybrid" (the
	// default: Ed25519 and ML-DSA-65), "ed25519" or "ml-dsa-65"
	// (bundle.ParseMode). Set without ConfigTrustKeys, it is an error.
	ConfigTrustMode = "trust_mode"
	// ConfigVectorMetric is the vector_metric of every request that states
	// none (docs/decision.md); absent or empty: cosine.
	ConfigVectorMetric = "vector_metric"
	// ConfigRerankScale is the rerank_scale of every request that states
	// none; absent or empty: the rule by value.
	ConfigRerankScale = "rerank_scale"
)

// Op selects what ctxgate_call runs.
type Op uint32

const (
	OpEvaluate Op = 0 // a request -> the decision JSON
	OpValidate Op = 1 // an answer -> the validation JSON
	OpDescribe Op = 2 // no input -> the version, schema and policy JSON
)

// Name is the op's name, which is also the name of the Extism export that
// runs it ("" for an unknown op).
func (op Op) Name() string {
	switch op {
	case OpEvaluate:
		return "evaluate"
	case OpValidate:
		return "validate"
	case OpDescribe:
		return "describe"
	}
	return ""
}

// OpNamed is the op whose Name is name.
func OpNamed(name string) (Op, bool) {
	for op := OpEvaluate; op <= OpDescribe; op++ {
		if op.Name() == name {
			return op, true
		}
	}
	return 0, false
}

// ErrorBit is set in a packed result when the bytes are the error JSON.
const ErrorBit = 1 << 31

// MaxLength is the longest result a packed result can describe: the length
// has the 31 bits below ErrorBit. The guest answers a longer one with a
// limit error.
const MaxLength = ErrorBit - 1

// Pack is ctxgate_call's result: the address in the high 32 bits, the
// length in the low 31 and ErrorBit when the bytes are the error JSON. n
// must be at most MaxLength (longer lengths lose their high bit).
func Pack(addr, n uint32, isErr bool) uint64 {
	r := uint64(addr)<<32 | uint64(n&MaxLength)
	if isErr {
		r |= ErrorBit
	}
	return r
}

// Unpack splits a packed result.
func Unpack(r uint64) (addr, n uint32, isErr bool) {
	return uint32(r >> 32), uint32(r) & MaxLength, r&ErrorBit != 0
}
