package gate

import "github.com/ctxgate/ctxgate/gate/wire"

// The gate's wire contract (the request, the decision, answer validation,
// errors and input limits) is declared in gate/wire, whose json tags are
// also the one declaration of the request's members. These are its names
// in the gate's API.
type (
	Request       = wire.Request
	Chunk         = wire.Chunk
	Scores        = wire.Scores
	Action        = wire.Action
	Level         = wire.Level
	Decision      = wire.Decision
	Signal        = wire.Signal
	Warning       = wire.Warning
	RAGConfidence = wire.RAGConfidence
	ChunkOutcome  = wire.ChunkOutcome
	Prompt        = wire.Prompt
	Refusal       = wire.Refusal
	GapEvent      = wire.GapEvent
	GapChunk      = wire.GapChunk
	PolicyRef     = wire.PolicyRef
	Answer        = wire.Answer
	Validation    = wire.Validation
	Limits        = wire.Limits
	Error         = wire.Error
)

// Actions, levels and query types (docs/decision.md).
const (
	ActionInject   = wire.ActionInject
	ActionCaveat   = wire.ActionCaveat
	ActionFallback = wire.ActionFallback
	ActionRefuse   = wire.ActionRefuse

	LevelSufficient   = wire.LevelSufficient
	LevelPartial      = wire.LevelPartial
	LevelInsufficient = wire.LevelInsufficient

	QueryTypeVectorSearch   = wire.QueryTypeVectorSearch
	QueryTypeGatedFallback  = wire.QueryTypeGatedFallback
	QueryTypeVectorFallback = wire.QueryTypeVectorFallback
)

// Error codes (wire.Error).
const (
	CodeBadJSON   = wire.CodeBadJSON
	CodeBadField  = wire.CodeBadField
	CodeLimit     = wire.CodeLimit
	CodeBadPolicy = wire.CodeBadPolicy
	CodeBadAnswer = wire.CodeBadAnswer
	// CodeInternal is the code AppendError writes for an error that is not
	// a *Error: a bug, never bad input. Hosts map it to HTTP 500.
	CodeInternal = wire.CodeInternal
)

// DefaultLimits are the input bounds used when a policy sets none
// (wire.DefaultLimits).
func DefaultLimits() Limits { return wire.DefaultLimits() }

func errorf(code, field, msg string) *Error { return wire.Errorf(code, field, msg) }
