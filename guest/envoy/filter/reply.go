package filter

import (
	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// refusalID is the completion id of a local refusal. It is fixed, like
// "created": 0, so a refusal is byte-identical for identical input in every
// build and host; the x-ctxgate-* headers say it did not come from a model.
const refusalID = "ctxgate-refusal"

// refusalCompletion is the OpenAI-shaped chat.completion a hard refusal
// answers with, so clients need no special case.
func refusalCompletion(dst []byte, model []byte, message string) []byte {
	dst = append(dst, `{"id":"`+refusalID+`","object":"chat.completion","created":0,"model":`...)
	dst = appendModel(dst, model)
	dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	dst = jsonx.AppendString(dst, message)
	dst = append(dst, `},"finish_reason":"stop"}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`...)
	return dst
}

// refusalStream is the same refusal as server-sent events, for a request
// with "stream": true: one chunk with the whole message, a final chunk with
// the finish reason, and the [DONE] sentinel.
func refusalStream(dst []byte, model []byte, message string) []byte {
	head := func(dst []byte) []byte {
		dst = append(dst, `data: {"id":"`+refusalID+`","object":"chat.completion.chunk","created":0,"model":`...)
		return appendModel(dst, model)
	}
	dst = head(dst)
	dst = append(dst, `,"choices":[{"index":0,"delta":{"role":"assistant","content":`...)
	dst = jsonx.AppendString(dst, message)
	dst = append(dst, "},\"finish_reason\":null}]}\n\n"...)
	dst = head(dst)
	dst = append(dst, ",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"...)
	return dst
}

// appendModel copies the request's model string (raw JSON) or writes "ctxgate".
func appendModel(dst, model []byte) []byte {
	if len(model) == 0 {
		return append(dst, `"ctxgate"`...)
	}
	return append(dst, model...)
}

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
