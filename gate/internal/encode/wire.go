package encode

import "github.com/ctxgate/ctxgate/gate/wire"

// The wire types the encoders write.
type (
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
	Validation    = wire.Validation
	Error         = wire.Error
)
