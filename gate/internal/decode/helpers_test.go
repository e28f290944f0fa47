package decode

import (
	"github.com/ctxgate/ctxgate/gate/internal/encode"
	"github.com/ctxgate/ctxgate/gate/wire"
	"github.com/ctxgate/ctxgate/internal/benchdoc"
)

// The gate's API over this package (gate.DecodeRequest and the others), as
// the tests call it.

func DecodeRequest(data []byte, lim *Limits) (*Request, error) {
	r, err := ParseRequest(data, lim, false)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func DecodeRequestInPlace(data []byte, lim *Limits) (*Request, error) {
	r, err := ParseRequest(data, lim, true)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func DecodeAnswer(data []byte, lim *Limits) (*wire.Answer, error) {
	a, err := ParseAnswer(data, lim, false)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// AppendError is the gate's error JSON.
var AppendError = encode.AppendError

// DefaultLimits are wire's.
func DefaultLimits() Limits { return wire.DefaultLimits() }

// benchRequest is the codec benchmarks' shared request (internal/benchdoc).
var benchRequest = benchdoc.Request

// goldenRoot is the repository's testdata.
const goldenRoot = "../../../testdata"
