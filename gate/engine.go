package gate

// Version is the gate's release version; SchemaVersion is the version of the
// request/decision wire format (docs/decision.md). Bump SchemaVersion on any
// change a host could notice.
const (
	Version       = "0.1.0"
	SchemaVersion = "1"
)

// Engine is one policy made ready for evaluation. It is deterministic and does
// no I/O. It is not safe for concurrent use, because it reuses scratch buffers
// between calls: hosts keep one Engine per Wasm instance or goroutine.
type Engine struct {
	policy *Policy
	ref    PolicyRef
}

// Policy returns the engine's validated policy. Callers must not modify it.
func (e *Engine) Policy() *Policy { return e.policy }

// Ref names the engine's policy (name, version, sha256).
func (e *Engine) Ref() PolicyRef { return e.ref }

// ---- The API below is the contract every host builds on. Bodies are stubs
// until the core lands; signatures do not change. ----

// NewEngine validates a policy document and returns an engine for it. An
// empty policyJSON selects the built-in default policy (policies/default.json).
func NewEngine(policyJSON []byte) (*Engine, error) {
	return nil, errorf(CodeBadPolicy, "", "core not implemented yet")
}

// Evaluate decodes a request, decides, and returns the decision JSON. The
// bytes are identical for identical (policy, request) in every build.
func (e *Engine) Evaluate(requestJSON []byte) ([]byte, error) {
	return nil, errorf(CodeBadJSON, "", "core not implemented yet")
}

// Decide is Evaluate without the JSON: for Go hosts that build requests in code.
func (e *Engine) Decide(req *Request) (*Decision, error) {
	return nil, errorf(CodeBadJSON, "", "core not implemented yet")
}

// Validate checks a model's answer after generation (input: {"answer": "...",
// "tags": ["S1",...]}) and returns the validation JSON.
func (e *Engine) Validate(answerJSON []byte) ([]byte, error) {
	return nil, errorf(CodeBadAnswer, "", "core not implemented yet")
}

// Check is Validate without the JSON.
func (e *Engine) Check(a *Answer) *Validation { return &Validation{} }

// Describe returns {"version","schema_version","policy":{"name","version","sha256"}}.
func (e *Engine) Describe() []byte { return nil }
