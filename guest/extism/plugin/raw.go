package plugin

import (
	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/internal/abi"
)

// Raw is the state behind the raw exports: an input buffer the host writes
// into directly and an output buffer the host reads directly. Both are
// reused across calls, so a warm instance allocates only what the core does.
type Raw struct {
	p   *Plugin
	in  []byte
	out []byte
}

// NewRaw serves raw calls over p.
func NewRaw(p *Plugin) *Raw { return &Raw{p: p} }

// Input returns n writable bytes for the next call's input, growing the
// buffer only when it is too small. Its address stays the same for every
// later Input of at most n bytes (hosts rely on that to skip the export), and
// it stays valid until an Input asks for more.
func (r *Raw) Input(n int) []byte {
	if n < 0 {
		return nil
	}
	if cap(r.in) < n || cap(r.in) == 0 {
		c := 2 * cap(r.in)
		if c < n {
			c = n
		}
		if c == 0 {
			c = 1 // so the buffer has an address even for an empty input
		}
		r.in = make([]byte, c)
	}
	return r.in[:n]
}

// Call runs op over the first n bytes of the input buffer and returns the
// result (decision, validation or description JSON) or, with isErr set, the
// error JSON. The result is valid until the next Call and at most
// abi.MaxLength bytes, so it always packs. The input buffer is consumed: the
// request is decoded in place (Engine.DecodeRequestInPlace), so the host
// must write a fresh input before every call.
func (r *Raw) Call(op abi.Op, n int) (out []byte, isErr bool) {
	if n < 0 || n > cap(r.in) {
		return r.fail(&gate.Error{Code: gate.CodeBadJSON, Message: "raw call: input length out of range"})
	}
	e, err := r.p.Engine()
	if err != nil {
		return r.fail(err)
	}
	if cap(r.out) > 4<<20 {
		// The previous output was larger than the default limits allow (a
		// policy raised max_decision_bytes), and the host has read it: that
		// much is not kept. Up to 4 MiB is kept, so a TinyGo heap finds
		// room for the output once, while it is still whole.
		r.out = nil
	}
	in := r.in[:n]
	switch op {
	case abi.OpEvaluate:
		if r.out, err = e.AppendEvaluateInPlace(r.out[:0], in); err != nil {
			return r.fail(err)
		}
	case abi.OpValidate:
		if r.out, err = e.AppendValidateInPlace(r.out[:0], in); err != nil {
			return r.fail(err)
		}
	case abi.OpDescribe:
		r.out = append(r.out[:0], e.Describe()...)
	default:
		return r.fail(&gate.Error{Code: gate.CodeBadJSON, Message: "raw call: unknown op"})
	}
	if uint64(len(r.out)) > abi.MaxLength {
		return r.fail(&gate.Error{Code: gate.CodeLimit, Message: "raw call: result longer than a packed length can say"})
	}
	return r.out, false
}

func (r *Raw) fail(err error) ([]byte, bool) {
	r.out = gate.AppendError(r.out[:0], err)
	return r.out, true
}
