package decode

import "github.com/ctxgate/ctxgate/gate/wire"

// The wire types and codes the decoders read into and answer with.
type (
	Request = wire.Request
	Chunk   = wire.Chunk
	Scores  = wire.Scores
	Limits  = wire.Limits
	Error   = wire.Error
)

const (
	CodeBadJSON   = wire.CodeBadJSON
	CodeBadField  = wire.CodeBadField
	CodeLimit     = wire.CodeLimit
	CodeBadAnswer = wire.CodeBadAnswer
)

func errorf(code, field, msg string) *Error { return wire.Errorf(code, field, msg) }

func limitError(field, what string, limit int, name string) *Error {
	return wire.LimitError(field, what, limit, name)
}
