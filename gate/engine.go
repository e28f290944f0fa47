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
