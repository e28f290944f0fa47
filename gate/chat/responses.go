package chat

import (
	"strconv"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// The Responses API (POST /v1/responses) carries a conversation in "input"
// instead of "messages" (ParseResponses reads it), and answers with a
// "response" object whose text is in output[].content[] parts of type
// "output_text". These are its local refusal and its answer's text.

// ResponseIDs are the identifiers of a local Responses API refusal: the
// response's "id", its message item's "id", and "created_at" (Unix seconds).
type ResponseIDs struct {
	Response, Message string
	Created           int64
}

// ResponseRefusal appends the "response" object a hard refusal answers a
// Responses API request with: one completed assistant message holding the
// refusal as output_text. model is the request's raw JSON "model" (nil:
// "ctxgate"). It ends with its closing brace, so a host may splice members
// in before it.
func ResponseRefusal(dst []byte, ids ResponseIDs, model []byte, message string) []byte {
	return appendResponse(dst, ids, model, "completed", func(dst []byte) []byte {
		return appendRefusalItem(dst, ids, "completed", message, true)
	})
}

// ResponseRefusalStream appends the same refusal as the Responses API's
// server-sent events, in the order OpenAI sends them: response.created, the
// message item and its text part added, the text as one delta, then each
// done event and response.completed, whose "response" is ResponseRefusal's
// object. beforeEnd, when set, may add members to that object (it is called
// with the object open, after its last member).
func ResponseRefusalStream(dst []byte, ids ResponseIDs, model []byte, message string, beforeEnd func([]byte) []byte) []byte {
	seq := 0
	event := func(dst []byte, typ string, body func([]byte) []byte) []byte {
		dst = append(dst, "event: "...)
		dst = append(dst, typ...)
		dst = append(dst, "\ndata: {\"type\":\""...)
		dst = append(dst, typ...)
		dst = append(dst, `","sequence_number":`...)
		dst = strconv.AppendInt(dst, int64(seq), 10)
		seq++
		dst = body(dst)
		return append(dst, "}\n\n"...)
	}
	part := func(dst []byte) []byte {
		dst = append(dst, `,"item_id":`...)
		dst = jsonx.AppendString(dst, ids.Message)
		return append(dst, `,"output_index":0,"content_index":0`...)
	}
	dst = event(dst, "response.created", func(dst []byte) []byte {
		dst = append(dst, `,"response":`...)
		return appendResponse(dst, ids, model, "in_progress", nil)
	})
	dst = event(dst, "response.output_item.added", func(dst []byte) []byte {
		dst = append(dst, `,"output_index":0,"item":`...)
		return appendRefusalItem(dst, ids, "in_progress", "", false)
	})
	dst = event(dst, "response.content_part.added", func(dst []byte) []byte {
		dst = append(part(dst), `,"part":`...)
		return appendTextPart(dst, "")
	})
	dst = event(dst, "response.output_text.delta", func(dst []byte) []byte {
		dst = append(part(dst), `,"delta":`...)
		dst = jsonx.AppendString(dst, message)
		return append(dst, `,"logprobs":[]`...)
	})
	dst = event(dst, "response.output_text.done", func(dst []byte) []byte {
		dst = append(part(dst), `,"text":`...)
		dst = jsonx.AppendString(dst, message)
		return append(dst, `,"logprobs":[]`...)
	})
	dst = event(dst, "response.content_part.done", func(dst []byte) []byte {
		dst = append(part(dst), `,"part":`...)
		return appendTextPart(dst, message)
	})
	dst = event(dst, "response.output_item.done", func(dst []byte) []byte {
		dst = append(dst, `,"output_index":0,"item":`...)
		return appendRefusalItem(dst, ids, "completed", message, true)
	})
	dst = event(dst, "response.completed", func(dst []byte) []byte {
		dst = append(dst, `,"response":`...)
		dst = ResponseRefusal(dst, ids, model, message)
		if beforeEnd != nil {
			dst = beforeEnd(dst[:len(dst)-1])
			dst = append(dst, '}')
		}
		return dst
	})
	return dst
}

// appendResponse writes a response object; output appends its items (nil:
// none).
func appendResponse(dst []byte, ids ResponseIDs, model []byte, status string, output func([]byte) []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsonx.AppendString(dst, ids.Response)
	dst = append(dst, `,"object":"response","created_at":`...)
	dst = strconv.AppendInt(dst, ids.Created, 10)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","error":null,"incomplete_details":null,"model":`...)
	dst = appendModel(dst, model)
	dst = append(dst, `,"output":[`...)
	if output != nil {
		dst = output(dst)
	}
	dst = append(dst, `],"parallel_tool_calls":true,"tool_choice":"auto","tools":[]`...)
	if status == "completed" {
		dst = append(dst, `,"usage":{"input_tokens":0,"input_tokens_details":{"cached_tokens":0},"output_tokens":0,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":0}`...)
	}
	return append(dst, '}')
}

func appendRefusalItem(dst []byte, ids ResponseIDs, status, message string, withText bool) []byte {
	dst = append(dst, `{"type":"message","id":`...)
	dst = jsonx.AppendString(dst, ids.Message)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","role":"assistant","content":[`...)
	if withText {
		dst = appendTextPart(dst, message)
	}
	return append(dst, "]}"...)
}

func appendTextPart(dst []byte, text string) []byte {
	dst = append(dst, `{"type":"output_text","text":`...)
	dst = jsonx.AppendString(dst, text)
	return append(dst, `,"annotations":[]}`...)
}

// ResponseText is the answer's text in a parsed "response" object: its
// output_text parts in order, joined as the OpenAI SDKs' output_text joins
// them (no separator). ok is false when there is no such part.
func ResponseText(root *jsonx.Value) (text string, ok bool) {
	EachResponseText(root, func(_, _ int, t string) bool {
		text += t
		ok = true
		return true
	})
	return text, ok
}

// EachResponseText calls fn with each output_text part of the message items
// of a parsed "response" object, in order: its output and content indexes
// and its text. fn returns false to stop.
func EachResponseText(root *jsonx.Value, fn func(output, content int, text string) bool) {
	out := root.Get("output")
	for i := 0; i < out.Len(); i++ {
		item := out.Index(i)
		if item.Get("type").Str() != "message" {
			continue
		}
		content := item.Get("content")
		for j := 0; j < content.Len(); j++ {
			p := content.Index(j)
			if p.Get("type").Str() == "output_text" && p.Get("text").Kind() == jsonx.String && !fn(i, j, p.Get("text").Str()) {
				return
			}
		}
	}
}
