package wire

import "strconv"

// Error is every error the gate returns. Field names the offending input
// field as a path (for example "chunks[3].scores.vector"), so a user can fix
// the request without reading the source. Code is stable and maps to HTTP
// statuses in the hosts (see docs/decision.md).
type Error struct {
	Code    string // bad_json | bad_field | limit | bad_policy | bad_answer
	Field   string // "" when the error is not about one field
	Message string
}

// Error codes.
const (
	CodeBadJSON   = "bad_json"   // not JSON, or JSON of the wrong shape
	CodeBadField  = "bad_field"  // a field has a wrong type or value
	CodeLimit     = "limit"      // an input limit of the policy was exceeded
	CodeBadPolicy = "bad_policy" // the policy is invalid
	CodeBadAnswer = "bad_answer" // the answer-validation input is invalid
)

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// CodeInternal is the code an error that is not an *Error is written with
// (gate.AppendError): a bug, never bad input. Hosts map it to HTTP 500.
const CodeInternal = "internal"

// Errorf returns an *Error with code, field and message.
func Errorf(code, field, msg string) *Error { return &Error{Code: code, Field: field, Message: msg} }

// LimitError is the error of a request (or an output) over the limit
// named name: code "limit", naming the field and what it is.
func LimitError(field, what string, limit int, name string) *Error {
	return Errorf(CodeLimit, field, what+"; the limit is "+strconv.Itoa(limit)+" ("+name+")")
}
