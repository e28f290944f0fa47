package encode

import (
	"errors"

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
	var ge *Error
	switch {
	case errors.As(err, &ge):
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
