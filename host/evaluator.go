package host

import "context"

// Evaluator is what both a Wasm Gate and a Native gate offer, so callers (the
// CLI, the server, parity tests) pick one at start-up and use one code path.
type Evaluator interface {
	// Evaluate decides a request (JSON) and returns the decision JSON.
	Evaluate(ctx context.Context, request []byte) ([]byte, error)
	// Validate checks a model's answer (JSON) and returns the validation JSON.
	Validate(ctx context.Context, answer []byte) ([]byte, error)
	// Describe returns {"version","schema_version","policy":{...}}.
	Describe(ctx context.Context) ([]byte, error)
	Close(ctx context.Context) error
}

var (
	_ Evaluator = (*Gate)(nil)
	_ Evaluator = (*Native)(nil)
)
