package host

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/ctxgate/ctxgate/gate"
)

// Sentinel errors. Test with errors.Is; the concrete error usually carries
// more detail in its message.
var (
	// ErrTimeout: the call's context ended (deadline or cancellation) before
	// the guest finished. The instance that was running is closed and replaced.
	// The error also matches the context's own error (context.DeadlineExceeded
	// or context.Canceled).
	ErrTimeout = errors.New("ctxgate: call timed out")
	// ErrTrap: the guest trapped (unreachable, out of bounds, out of memory,
	// proc_exit from a panic). The instance is discarded and replaced; other
	// instances are not affected.
	ErrTrap = errors.New("ctxgate: guest trapped")
	// ErrClosed: the Gate was closed.
	ErrClosed = errors.New("ctxgate: gate is closed")
	// ErrNotBuilt: the selected module is not embedded in this binary.
	// The modules are committed (host/wasm), so this means a tree without
	// them; make modules rebuilds them.
	ErrNotBuilt = errors.New("module not built: run make modules")
)

// GateError is bad input reported by the gate: the request, answer or policy
// is wrong, and Field says where. It is the same value natively and through
// every module, so callers handle one type.
type GateError struct {
	Code    string // bad_json | bad_field | limit | bad_policy | bad_answer (| internal: a core bug)
	Field   string // a path such as "chunks[2].scores.vector"; "" when not about one field
	Message string
	// JSON is the error as the guest wrote it: {"error":{...}}. Servers pass
	// it through unchanged so every host answers with the same bytes.
	JSON []byte
}

func (e *GateError) Error() string {
	s := "ctxgate: " + e.Code + ": "
	if e.Field != "" {
		s += e.Field + ": "
	}
	return s + e.Message
}

// Status is the HTTP status docs/architecture.md assigns to the code.
// bad_policy is 422 here; a server with no policy loaded answers 503 itself.
func (e *GateError) Status() int {
	switch e.Code {
	case gate.CodeBadJSON:
		return 400
	case gate.CodeLimit:
		return 413
	case gate.CodeInternal:
		return 500
	default:
		return 422
	}
}

// errorEnvelope is the guest's error JSON. The host may use encoding/json:
// only guests avoid it.
type errorEnvelope struct {
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field"`
	} `json:"error"`
}

// parseGuestError turns the guest's error string into a *GateError, or
// reports ok=false when the string is not the error JSON.
func parseGuestError(msg string) (*GateError, bool) {
	var env errorEnvelope
	if json.Unmarshal([]byte(msg), &env) != nil || env.Error == nil || env.Error.Code == "" {
		return nil, false
	}
	return &GateError{Code: env.Error.Code, Field: env.Error.Field, Message: env.Error.Message, JSON: []byte(msg)}, true
}

// fromGateError converts the core's error to the host's, for the native path.
func fromGateError(err error) error {
	var ge *gate.Error
	if !errors.As(err, &ge) {
		return err
	}
	return &GateError{Code: ge.Code, Field: ge.Field, Message: ge.Message, JSON: gate.AppendError(nil, ge)}
}

// newGateError is an error the host itself raises (an input over the host's
// limit), written by the core's encoder so it looks like any other.
func newGateError(code, field, msg string) *GateError {
	return fromGateError(&gate.Error{Code: code, Field: field, Message: msg}).(*GateError)
}

// timeoutError matches both ErrTimeout and the context's error.
type timeoutError struct{ cause error }

func (e *timeoutError) Error() string { return ErrTimeout.Error() + ": " + e.cause.Error() }
func (e *timeoutError) Is(target error) bool {
	return target == ErrTimeout || errors.Is(e.cause, target)
}
func (e *timeoutError) Unwrap() error { return e.cause }

func newTimeout(ctx context.Context) error {
	cause := ctx.Err()
	if cause == nil {
		cause = context.DeadlineExceeded
	}
	return &timeoutError{cause: cause}
}

// trapError matches ErrTrap and keeps the runtime's message (with the wasm
// stack trace), which is what a developer needs to fix the guest.
type trapError struct {
	fn    string
	cause error
}

func (e *trapError) Error() string {
	return ErrTrap.Error() + " in " + strconv.Quote(e.fn) + ": " + e.cause.Error()
}
func (e *trapError) Is(target error) bool { return target == ErrTrap }
func (e *trapError) Unwrap() error        { return e.cause }
