package server

// This file maps an OpenAI chat-completion body to a gate request and
// rewrites it after the decision. It follows guest/envoy/filter (chat.go,
// verdict.go, reply.go) rule for rule: same documents/ctxgate fields, same
// query choice, same system message, same refusal bodies. The filter keeps
// that logic unexported in a package that imports the proxy-wasm SDK, so it
// cannot be imported here; docs/server.md records the request to factor it
// into a pure package both use. Until then the cases in gateway_test.go pin
// the behaviour the two must share.

import (
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

const (
	// extensionField carries retrieval results in the gate's own request
	// shape: {"ctxgate": {"chunks": [...], "query_embedding": [...]}}.
	extensionField = "ctxgate"
	maxBodyDepth   = 64
)

// errNotGated: the body carries neither documents nor the extension field,
// so the request passes through untouched (a proxy in front of mixed
// traffic gates only RAG requests).
var errNotGated = &gate.Error{Code: "not_gated", Message: "no retrieved documents in the request"}

type chatBody struct {
	root         *jsonx.Value
	docs         *jsonx.Value // the documents array, nil when absent
	docsPath     []string
	ext          *jsonx.Value // the ctxgate object, nil when absent
	messages     *jsonx.Value
	lastUser     int // index in messages, -1 when none
	lastUserText *jsonx.Value
	query        *jsonx.Value // the JSON string the gate reads as the question
	queryField   string
	stream       bool
	model        *jsonx.Value
}

func parseChatBody(body []byte, docsPath, queryPath []string) (*chatBody, error) {
	root, err := jsonx.Parse(body, maxBodyDepth)
	if err != nil {
		return nil, &gate.Error{Code: gate.CodeBadJSON, Message: "request body is not valid JSON: " + err.Error()}
	}
	if root.Kind() != jsonx.Object {
		return nil, &gate.Error{Code: gate.CodeBadJSON, Message: "request body must be a JSON object"}
	}
	c := &chatBody{root: &root, docsPath: docsPath, lastUser: -1}
	if v := getPath(c.root, docsPath); v != nil {
		if v.Kind() != jsonx.Array {
			return nil, &gate.Error{Code: gate.CodeBadField, Field: strings.Join(docsPath, "."), Message: "must be an array of chunks"}
		}
		c.docs = v
	}
	if v := c.root.Get(extensionField); v != nil {
		if v.Kind() != jsonx.Object {
			return nil, &gate.Error{Code: gate.CodeBadField, Field: extensionField, Message: "must be an object in the gate's request shape"}
		}
		c.ext = v
	}
	if c.docs == nil && c.ext == nil {
		return nil, errNotGated
	}
	if c.docs != nil && c.ext != nil && c.ext.Get("chunks") != nil {
		return nil, &gate.Error{Code: gate.CodeBadField, Field: strings.Join(docsPath, "."),
			Message: "documents and ctxgate.chunks are both set; send one"}
	}
	if v := c.root.Get("stream"); v.Kind() == jsonx.Bool && v.Bool() {
		c.stream = true
	}
	if v := c.root.Get("model"); v.Kind() == jsonx.String {
		c.model = v
	}
	if v := c.root.Get("messages"); v != nil {
		if v.Kind() != jsonx.Array {
			return nil, &gate.Error{Code: gate.CodeBadField, Field: "messages", Message: "must be an array"}
		}
		c.messages = v
		c.findLastUser()
	}
	switch {
	case len(queryPath) > 0:
		v := getPath(c.root, queryPath)
		if v.Kind() != jsonx.String {
			return nil, &gate.Error{Code: gate.CodeBadField, Field: strings.Join(queryPath, "."), Message: "missing, or not a string"}
		}
		c.query, c.queryField = v, strings.Join(queryPath, ".")
	case c.lastUserText != nil:
		c.query = c.lastUserText
		c.queryField = "messages[" + strconv.Itoa(c.lastUser) + "].content"
	default:
		if c.ext.Get("query") == nil {
			return nil, &gate.Error{Code: gate.CodeBadField, Field: "messages", Message: "no user message with text content to use as the query"}
		}
	}
	return c, nil
}

func getPath(v *jsonx.Value, path []string) *jsonx.Value {
	for _, k := range path {
		if v.Kind() != jsonx.Object {
			return nil
		}
		v = v.Get(k)
	}
	return v
}

func (c *chatBody) findLastUser() {
	for i := 0; i < c.messages.Len(); i++ {
		m := c.messages.Index(i)
		if m.Kind() != jsonx.Object || m.Get("role").Str() != "user" || m.Get("role").Kind() != jsonx.String {
			continue
		}
		c.lastUser, c.lastUserText = i, nil
		switch content := m.Get("content"); content.Kind() {
		case jsonx.String:
			c.lastUserText = content
		case jsonx.Array:
			// Multimodal content: the first text part is the question.
			for j := 0; j < content.Len(); j++ {
				part := content.Index(j)
				if part.Kind() == jsonx.Object && part.Get("type").Str() == "text" && part.Get("text").Kind() == jsonx.String {
					c.lastUserText = part.Get("text")
					break
				}
			}
		}
	}
}

// queryText is the question as a Go string ("" when it comes from the
// extension's own "query").
func (c *chatBody) queryText() string {
	if q := c.ext.Get("query"); q.Kind() == jsonx.String {
		return q.Str()
	}
	return c.query.Str()
}

// gateRequest builds the gate request: the extension object's members, then
// "query" and "chunks" when the extension does not set them.
func (c *chatBody) gateRequest(dst []byte) []byte {
	dst = append(dst, '{')
	n := 0
	sep := func() {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
	}
	hasQuery := false
	if c.ext != nil {
		for i := 0; i < c.ext.Len(); i++ {
			k := c.ext.Key(i)
			hasQuery = hasQuery || k == "query"
			sep()
			dst = jsonx.AppendString(dst, k)
			dst = append(dst, ':')
			dst = jsonx.AppendValue(dst, c.ext.Member(i))
		}
	}
	if !hasQuery && c.query != nil {
		sep()
		dst = append(dst, `"query":`...)
		dst = jsonx.AppendValue(dst, c.query)
	}
	if c.docs != nil {
		sep()
		dst = append(dst, `"chunks":`...)
		dst = jsonx.AppendValue(dst, c.docs)
	}
	return append(dst, '}')
}

// userField renames a core error's field from the spliced gate request's
// names to the body's: "chunks[2].scores.vector" reads
// "documents[2].scores.vector", since the client sent no "chunks".
func (c *chatBody) userField(err error) error {
	ge, ok := err.(*gate.Error)
	if !ok || ge.Field == "" {
		return err
	}
	f := ge.Field
	root, rest := f, ""
	if i := strings.IndexAny(f, ".["); i >= 0 {
		root, rest = f[:i], f[i:]
	}
	switch {
	case root == "chunks" && c.docs != nil:
		f = strings.Join(c.docsPath, ".") + rest
	case root == "query" && c.queryField != "" && c.ext.Get("query") == nil:
		f = c.queryField + rest
	case c.ext != nil:
		f = extensionField + "." + f
	}
	return &gate.Error{Code: ge.Code, Field: f, Message: ge.Message}
}

// rewrite returns the body the upstream gets: without the documents and the
// extension field, a system message with systemText before the last user
// message (when systemText is set), and that message's content replaced by
// userText when replaceUser is set.
func (c *chatBody) rewrite(systemText, userText string, replaceUser bool) []byte {
	return c.appendObject(nil, c.root, 0, systemText, userText, replaceUser)
}

func (c *chatBody) appendObject(dst []byte, obj *jsonx.Value, depth int, systemText, userText string, replaceUser bool) []byte {
	dst = append(dst, '{')
	n := 0
	for i := 0; i < obj.Len(); i++ {
		k, v := obj.Key(i), obj.Member(i)
		if depth == 0 && k == extensionField {
			continue
		}
		onPath := depth < len(c.docsPath) && k == c.docsPath[depth]
		if onPath && depth == len(c.docsPath)-1 {
			continue // the documents themselves
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = jsonx.AppendString(dst, k)
		dst = append(dst, ':')
		switch {
		case depth == 0 && v == c.messages:
			dst = c.appendMessages(dst, systemText, userText, replaceUser)
		case onPath && v.Kind() == jsonx.Object:
			dst = c.appendObject(dst, v, depth+1, "", "", false)
		default:
			dst = jsonx.AppendValue(dst, v)
		}
	}
	return append(dst, '}')
}

func (c *chatBody) appendMessages(dst []byte, systemText, userText string, replaceUser bool) []byte {
	dst = append(dst, '[')
	for i := 0; i < c.messages.Len(); i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		m := c.messages.Index(i)
		if i != c.lastUser {
			dst = jsonx.AppendValue(dst, m)
			continue
		}
		// The gate's instructions sit right before the question they
		// govern, after any system prompt of the application's own.
		if systemText != "" {
			dst = append(dst, `{"role":"system","content":`...)
			dst = jsonx.AppendString(dst, systemText)
			dst = append(dst, "},"...)
		}
		if !replaceUser {
			dst = jsonx.AppendValue(dst, m)
			continue
		}
		dst = append(dst, '{')
		n := 0
		for j := 0; j < m.Len(); j++ {
			if m.Key(j) == "content" {
				continue
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = jsonx.AppendString(dst, m.Key(j))
			dst = append(dst, ':')
			dst = jsonx.AppendValue(dst, m.Member(j))
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `"content":`...)
		dst = jsonx.AppendString(dst, userText)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// systemText is the system message an inject or caveat decision adds: the
// constraint instructions, the <sources> block, and for caveat the caveat.
func systemText(d *decisionView) string {
	var s string
	if d.Prompt != nil {
		s = d.Prompt.Instructions
		if d.Prompt.Sources != "" {
			if s != "" {
				s += "\n\n"
			}
			s += d.Prompt.Sources
		}
	}
	if d.Action == string(gate.ActionCaveat) && d.Caveat != "" {
		if s != "" {
			s += "\n\n"
		}
		s += d.Caveat
	}
	return s
}

// refusalID is the completion id of a local refusal: fixed, like
// "created": 0, so a refusal is the same bytes for the same input; the
// x-ctxgate-* headers say it did not come from a model.
const refusalID = "ctxgate-refusal"

// refusalCompletion is the OpenAI-shaped chat.completion of a hard refusal,
// the Envoy filter's body plus seed 002's "sufficiency" member.
func refusalCompletion(dst []byte, model *jsonx.Value, message string, d *decisionView) []byte {
	dst = append(dst, `{"id":"`+refusalID+`","object":"chat.completion","created":0,"model":`...)
	dst = appendModel(dst, model)
	dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	dst = jsonx.AppendString(dst, message)
	dst = append(dst, `},"finish_reason":"stop"}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0},"sufficiency":`...)
	dst = appendSufficiency(dst, d)
	return append(dst, '}')
}

// refusalStream is the same refusal as server-sent events, for "stream":
// true: one chunk with the whole message, a final chunk with the finish
// reason, and the [DONE] sentinel.
func refusalStream(dst []byte, model *jsonx.Value, message string) []byte {
	head := func(dst []byte) []byte {
		dst = append(dst, `data: {"id":"`+refusalID+`","object":"chat.completion.chunk","created":0,"model":`...)
		return appendModel(dst, model)
	}
	dst = head(dst)
	dst = append(dst, `,"choices":[{"index":0,"delta":{"role":"assistant","content":`...)
	dst = jsonx.AppendString(dst, message)
	dst = append(dst, "},\"finish_reason\":null}]}\n\n"...)
	dst = head(dst)
	return append(dst, ",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"...)
}

func appendModel(dst []byte, model *jsonx.Value) []byte {
	if model == nil {
		return append(dst, `"ctxgate"`...)
	}
	return jsonx.AppendValue(dst, model)
}
