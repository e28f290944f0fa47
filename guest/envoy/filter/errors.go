package filter

import "github.com/ctxgate/ctxgate/gate"

// errorCode returns the stable code of err (gate.CodeInternal for a bug).
func errorCode(err error) string {
	if ge, ok := err.(*gate.Error); ok && ge.Code != "" {
		return ge.Code
	}
	return gate.CodeInternal
}

// errorStatus maps an error code to the HTTP status of a fail-closed reply
// (docs/architecture.md, "Error JSON").
func errorStatus(code string) uint32 {
	switch code {
	case gate.CodeBadJSON:
		return 400
	case gate.CodeBadField, gate.CodeBadAnswer:
		return 422
	case gate.CodeLimit:
		return 413
	case gate.CodeBadPolicy:
		return 503
	}
	return 500
}
