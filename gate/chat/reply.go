package chat

import (
	"strconv"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// RefusalID is the completion id of a local refusal when the host gives
// none. It is fixed, like "created": 0, so a refusal is byte-identical for
// identical input in every build and host; the x-ctxgate-* headers say it
// did not come from a model. A host that can draw random numbers and read a
// clock (the server) gives each refusal its own id and time with
// RefusalCompletionAs and RefusalStreamAs.
const RefusalID = "ctxgate-refusal"

// RefusalCompletion appends the OpenAI-shaped chat.completion a hard refusal
// answers with, so clients need no special case. model is the request's
// raw JSON "model" string (Chat.Model); nil writes "ctxgate". The object
// ends with its closing brace, so a host may splice members in before it.
func RefusalCompletion(dst, model []byte, message string) []byte {
	return RefusalCompletionAs(dst, RefusalID, 0, model, message)
}

// RefusalCompletionAs is RefusalCompletion with the completion's "id" and
// "created" (Unix seconds) given by the host.
func RefusalCompletionAs(dst []byte, id string, created int64, model []byte, message string) []byte {
	dst = appendHead(dst, id, "chat.completion", created, model)
	dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	dst = jsonx.AppendString(dst, message)
	dst = append(dst, `},"finish_reason":"stop"}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`...)
	return dst
}

// RefusalStream appends the same refusal as server-sent events, for a
// request with "stream": true: one chunk with the whole message, a final
// chunk with the finish reason, and the [DONE] sentinel.
func RefusalStream(dst, model []byte, message string) []byte {
	return RefusalStreamAs(dst, RefusalID, 0, model, message)
}

// RefusalStreamAs is RefusalStream with the chunks' "id" and "created" given
// by the host. It ends with StreamDone, so a host may insert a chunk of its
// own before the sentinel.
func RefusalStreamAs(dst []byte, id string, created int64, model []byte, message string) []byte {
	dst = append(dst, "data: "...)
	dst = appendHead(dst, id, "chat.completion.chunk", created, model)
	dst = append(dst, `,"choices":[{"index":0,"delta":{"role":"assistant","content":`...)
	dst = jsonx.AppendString(dst, message)
	dst = append(dst, "},\"finish_reason\":null}]}\n\n"...)
	dst = append(dst, "data: "...)
	dst = appendHead(dst, id, "chat.completion.chunk", created, model)
	dst = append(dst, ",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"+StreamDone...)
	return dst
}

// StreamDone is the sentinel event that ends a chat-completion stream.
const StreamDone = "data: [DONE]\n\n"

// appendHead opens a completion object: {"id":..,"object":..,"created":..,"model":..
func appendHead(dst []byte, id, object string, created int64, model []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsonx.AppendString(dst, id)
	dst = append(dst, `,"object":"`...)
	dst = append(dst, object...)
	dst = append(dst, `","created":`...)
	dst = strconv.AppendInt(dst, created, 10)
	dst = append(dst, `,"model":`...)
	return appendModel(dst, model)
}

// appendModel copies the request's model string (raw JSON) or writes "ctxgate".
func appendModel(dst, model []byte) []byte {
	if len(model) == 0 {
		return append(dst, `"ctxgate"`...)
	}
	return append(dst, model...)
}

// AnswerContent returns choices[0].message.content of a chat.completion
// body, and false when the body is not JSON or that member is not a string.
func AnswerContent(body []byte) (string, bool) {
	var ps jsonx.Parser
	return AnswerContentUsing(&ps, body)
}

// AnswerContentUsing is AnswerContent parsing with ps (see ParseUsing).
// The string is valid until ps parses again.
func AnswerContentUsing(ps *jsonx.Parser, body []byte) (string, bool) {
	v, err := ps.Parse(body, jsonx.Limits{MaxDepth: MaxDepth})
	if err != nil {
		return "", false
	}
	return AnswerOf(v)
}

// AnswerOf is AnswerContent on a body the caller has already parsed.
func AnswerOf(root *jsonx.Value) (string, bool) {
	c := root.Get("choices").Index(0).Get("message").Get("content")
	if c.Kind() != jsonx.String {
		return "", false
	}
	return c.Str(), true
}
