package chat

// Header names every gateway sets on a gated exchange: the Envoy filter
// (guest/envoy/filter) and the server's gateway mode (host/server). They are
// written here once, in lower case as HTTP/2 and proxy-wasm carry them; Go's
// http.Header stores the canonical form (X-Ctxgate-Action), the same header.
const (
	HeaderAction      = "x-ctxgate-action" // inject|caveat|fallback|refuse|error|skip
	HeaderLevel       = "x-ctxgate-level"
	HeaderConfidence  = "x-ctxgate-confidence"
	HeaderPolicy      = "x-ctxgate-policy" // name@version
	HeaderRefusal     = "x-ctxgate-refusal"
	HeaderError       = "x-ctxgate-error" // the error code when action is error
	HeaderDecisionID  = "x-ctxgate-decision-id"
	HeaderAnswerCheck = "x-ctxgate-answer-check"
	HeaderSoftRefusal = "x-ctxgate-soft-refusal"
	HeaderUnknownCite = "x-ctxgate-unknown-citations"
	HeaderUncited     = "x-ctxgate-uncited-sentences"
)
