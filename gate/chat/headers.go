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

// MaxUnknownCitations bounds the tags x-ctxgate-unknown-citations lists. An
// answer can cite thousands of tags the prompt never offered, and a header
// of them all would be megabytes, past any proxy's header limit (Envoy's is
// 60 KiB for all of a response's headers by default).
const MaxUnknownCitations = 32

// UnknownCitations is x-ctxgate-unknown-citations' value for the unknown
// tags of an answer check: at most MaxUnknownCitations of them, comma
// separated, then ",..." when there are more.
func UnknownCitations(tags []string) string {
	n := min(len(tags), MaxUnknownCitations)
	size := 0
	for _, t := range tags[:n] {
		size += len(t) + 1
	}
	b := make([]byte, 0, size+4)
	for i, t := range tags[:n] {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, t...)
	}
	if len(tags) > n {
		b = append(b, ",..."...)
	}
	return string(b)
}
