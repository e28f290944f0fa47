package bundle

import (
	"strconv"

	"github.com/ctxgate/ctxgate/gate/jsonx"

	"github.com/ctxgate/ctxgate/gate"
)

// Every error of this package is a policy error: a bundle that does not open
// means there is no policy the host may load.
func bad(field, msg string) *gate.Error {
	return &gate.Error{Code: gate.CodeBadPolicy, Field: field, Message: msg}
}

func itoa(n int) string { return strconv.Itoa(n) }

func index(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }

// prefix places an error's field under parent ("public" -> "trust_keys[1].public").
func prefix(err *gate.Error, parent string) *gate.Error {
	f := parent
	if err.Field != "" {
		f += "." + err.Field
	}
	return &gate.Error{Code: err.Code, Field: f, Message: err.Message}
}

// maxDepth bounds nesting in bundles, trust files and receipts; policies
// are a few levels deep.
const maxDepth = 64

func parse(data []byte) (*jsonx.Value, error) {
	v, err := jsonx.Parse(data, maxDepth)
	if err != nil {
		return nil, err
	}
	return &v, nil
}
