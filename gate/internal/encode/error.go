package encode

import (
	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/gate/wire"
)

// AppendError appends the error JSON every host returns:
// {"error":{"code":"bad_field","message":"...","field":"chunks[2].scores.vector"}}.
// field is always present ("" when the error is not about one field), so
// clients can read it without a presence check. A *Error wrapped by a host
// (fmt.Errorf("...: %w", err)) keeps its code; any other error is "internal".
func AppendError(dst []byte, err error) []byte {
	code, msg, field := wire.CodeInternal, "unknown error", ""
	switch ge, ok := asGateError(err); {
	case ok:
		if ge != nil { // a typed nil *Error must not be dereferenced
			code, msg, field = ge.Code, ge.Message, ge.Field
		}
	case err != nil:
		msg = err.Error()
	}
	dst = append(dst, `{"error":{"code":`...)
	dst = jsonx.AppendString(dst, code)
	dst = append(dst, `,"message":`...)
	dst = jsonx.AppendString(dst, msg)
	dst = append(dst, `,"field":`...)
	dst = jsonx.AppendString(dst, field)
	return append(dst, "}}"...)
}

// asGateError is errors.As(err, &ge) for the one type it looks for,
// following Unwrap() error and Unwrap() []error as errors.As does. Written
// out because errors.As reaches it through reflection, which costs the
// TinyGo module some 10 KB (docs/build.md).
func asGateError(err error) (*Error, bool) {
	for err != nil {
		switch e := err.(type) {
		case *Error:
			return e, true
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				if ge, ok := asGateError(x); ok {
					return ge, true
				}
			}
			return nil, false
		default:
			return nil, false
		}
	}
	return nil, false
}
