package chat

import "github.com/ctxgate/ctxgate/gate/jsonx"

// RefusalID is the completion id of a local refusal. It is fixed, like
// "created": 0, so a refusal is byte-identical for identical input in every
// build and host; the x-ctxgate-* headers say it did not come from a model.
const RefusalID = "ctxgate-refusal"

// RefusalCompletion appends the OpenAI-shaped chat.completion a hard refusal
// answers with, so clients need no special case. model is the request's
// raw JSON "model" string (Chat.Model); nil writes "ctxgate". The object
// ends with its closing brace, so a host may splice members in before it.
func RefusalCompletion(dst, model []byte, message string) []byte {
	dst = append(dst, `{"id":"`+RefusalID+`","object":"chat.completion","created":0,"model":`...)
	dst = appendModel(dst, model)
	dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	dst = jsonx.AppendString(dst, message)
	dst = append(dst, `},"finish_reason":"stop"}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`...)
	return dst
}

// RefusalStream appends the same refusal as server-sent events, for a
// request with "stream": true: one chunk with the whole message, a final
// chunk with the finish reason, and the [DONE] sentinel.
func RefusalStream(dst, model []byte, message string) []byte {
	head := func(dst []byte) []byte {
		dst = append(dst, `data: {"id":"`+RefusalID+`","object":"chat.completion.chunk","created":0,"model":`...)
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

// AnswerContent returns choices[0].message.content of a chat.completion
// body, and false when the body is not JSON or that member is not a string.
func AnswerContent(body []byte) (string, bool) {
	v, err := jsonx.Parse(body, MaxDepth)
	if err != nil {
		return "", false
	}
	return AnswerOf(&v)
}

// AnswerOf is AnswerContent on a body the caller has already parsed.
func AnswerOf(root *jsonx.Value) (string, bool) {
	c := root.Get("choices").Index(0).Get("message").Get("content")
	if c.Kind() != jsonx.String {
		return "", false
	}
	return c.Str(), true
}
