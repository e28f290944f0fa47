// Package chat maps an OpenAI chat-completions request body to a gate
// request and back: it finds the retrieved documents and the question,
// splices the gate request from the body's own bytes, rewrites the body for
// the upstream after the decision, and writes the local refusal replies.
//
// It is the one implementation of that mapping: the Envoy filter
// (guest/envoy/filter) and the server's gateway mode (host/server) both call
// it, so a body is gated and rewritten to the same bytes in every host. Like
// the core it is pure (no I/O, no fmt, no encoding/json), TinyGo-safe, and
// never panics: bad input is a *gate.Error naming the field.
package chat

import (
	"strconv"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// ExtensionField is the member that may carry retrieval results in the
// gate's own request shape: {"ctxgate": {"chunks": [...], "query_embedding": [...]}}.
const ExtensionField = "ctxgate"

// MaxDepth bounds JSON nesting in bodies; chat requests nest a few levels.
const MaxDepth = 64

// ErrNotGated reports a body with nothing to gate: it carries neither
// documents nor the extension field. Such requests pass untouched, so a
// proxy in front of a mixed fleet gates only RAG traffic.
var ErrNotGated = &gate.Error{Code: "not_gated", Message: "no retrieved documents in the request"}

// ErrNoUserMessage is the error of an inject or caveat decision on a body
// without a user message: the sources go right before it.
var ErrNoUserMessage = &gate.Error{Code: gate.CodeBadField, Field: "messages",
	Message: "the sources go before the last user message, and there is none"}

// Chat is what Parse found in one chat-completion request body: the byte
// spans the mapping reads, removes or replaces. Everything else is copied
// verbatim. A Chat holds body; the caller must not change it meanwhile.
type Chat struct {
	body []byte
	root span

	messages     span   // the "messages" array ("input" for the Responses API); !ok() when absent
	inputString  span   // Responses API: "input" given as one string, the user's message
	responses    bool   // the body is a Responses API request (ParseResponses)
	lastUser     span   // the last message with "role": "user"
	lastUserText span   // the string holding its text (content, or its first text part)
	query        span   // the JSON string the gate reads as the question
	queryField   string // where the question is, for error messages
	lastUserIdx  int

	documents       span // the documents array (docsPath)
	documentsMember span // its "key": value bytes when it is a root member
	docsPath        []string
	ext             span // the ctxgate extension object
	extQuery        span // its "query", "chunks" and "query_embedding" values
	extChunks       span
	extEmbedding    span
	stream          bool
	model           span
}

// rootMembers is one walk over the body's root object: every member the
// mapping reads, so a large body is scanned once, not once per member.
type rootMembers struct {
	first, ext, stream, model, messages span // values ("messages" is "input" for the Responses API)
	firstWhole                          span // the docsPath[0] member, key included
}

// Parse locates the members the mapping needs. docsPath is the member path
// of the documents array (empty: only the extension field is read);
// queryPath, when set, is the member path of the question string, else the
// question is the last user message's text, else the extension's "query".
// A body with neither documents nor extension returns ErrNotGated; other
// errors are *gate.Error values naming the field, like the core's.
func Parse(body []byte, docsPath, queryPath []string) (*Chat, error) {
	var ps jsonx.Parser
	return ParseUsing(&ps, body, docsPath, queryPath)
}

// ParseResponses is Parse for a Responses API request (POST /v1/responses):
// the conversation is "input", either one string (the user's message) or a
// list of items whose messages carry "input_text" (or "text") parts. The
// documents, the extension field and the question are found as in Parse,
// and Upstream rewrites "input" as it rewrites "messages".
func ParseResponses(body []byte, docsPath, queryPath []string) (*Chat, error) {
	var ps jsonx.Parser
	return parse(&ps, body, docsPath, queryPath, true)
}

// ParseUsing is Parse validating the body with ps, whose memory (the copy
// of the body, the node arena) a caller that parses one body after another
// keeps: the Envoy filter, whose TinyGo heap a fresh arena per request
// fragments.
func ParseUsing(ps *jsonx.Parser, body []byte, docsPath, queryPath []string) (*Chat, error) {
	return parse(ps, body, docsPath, queryPath, false)
}

func parse(ps *jsonx.Parser, body []byte, docsPath, queryPath []string, responses bool) (*Chat, error) {
	// Checked, not kept: the mapping splices the body's own bytes.
	if _, err := ps.Parse(body, jsonx.Limits{MaxDepth: MaxDepth, CheckOnly: true}); err != nil {
		return nil, &gate.Error{Code: gate.CodeBadJSON, Message: "request body is not valid JSON: " + err.Error()}
	}
	c := &Chat{body: body, root: span{skipSpace(body, 0), len(body)}, docsPath: docsPath, responses: responses}
	list := c.listName()
	if body[c.root.Start] != '{' {
		return nil, &gate.Error{Code: gate.CodeBadJSON, Message: "request body must be a JSON object"}
	}

	var r rootMembers
	first := ""
	if len(docsPath) > 0 {
		first = docsPath[0]
	}
	eachMember(body, c.root.Start, func(k []byte, m, v span) {
		if first != "" && keyIs(k, first) {
			r.first, r.firstWhole = v, m
		}
		switch {
		case keyIs(k, ExtensionField):
			r.ext = v
		case keyIs(k, list):
			r.messages = v
		case keyIs(k, "model"):
			r.model = v
		case keyIs(k, "stream"):
			r.stream = v
		}
	})

	if r.first.ok() {
		if v, ok := path(body, r.first, docsPath[1:]); ok {
			c.documents = v
			if len(docsPath) == 1 {
				c.documentsMember = r.firstWhole
			}
			if body[v.Start] != '[' {
				return nil, &gate.Error{Code: gate.CodeBadField, Field: joinPath(docsPath), Message: "must be an array of chunks"}
			}
		}
	}
	if r.ext.ok() {
		if body[r.ext.Start] != '{' {
			return nil, &gate.Error{Code: gate.CodeBadField, Field: ExtensionField, Message: "must be an object in the gate's request shape"}
		}
		c.ext = r.ext
		eachMember(body, c.ext.Start, func(k []byte, _, v span) {
			switch {
			case keyIs(k, "query"):
				c.extQuery = v
			case keyIs(k, "chunks"):
				c.extChunks = v
			case keyIs(k, "query_embedding"):
				c.extEmbedding = v
			}
		})
	}
	if !c.documents.ok() && !c.ext.ok() {
		return nil, ErrNotGated
	}
	if c.documents.ok() && c.extChunks.ok() {
		return nil, &gate.Error{Code: gate.CodeBadField, Field: joinPath(docsPath),
			Message: "documents and ctxgate.chunks are both set; send one"}
	}

	if v := r.stream; v.ok() && string(body[v.Start:v.End]) == "true" {
		c.stream = true
	}
	if v := r.model; v.ok() && body[v.Start] == '"' {
		c.model = v
	}
	if v := r.messages; v.ok() {
		switch {
		case responses && body[v.Start] == '"':
			c.inputString = v
		case body[v.Start] != '[':
			msg := "must be an array"
			if responses {
				msg = "must be a string or an array of input items"
			}
			return nil, &gate.Error{Code: gate.CodeBadField, Field: list, Message: msg}
		default:
			c.messages = v
			c.findLastUser()
		}
	}

	switch {
	case len(queryPath) > 0:
		v, ok := path(body, c.root, queryPath)
		if !ok || body[v.Start] != '"' {
			return nil, &gate.Error{Code: gate.CodeBadField, Field: joinPath(queryPath), Message: "missing, or not a string"}
		}
		c.query, c.queryField = v, joinPath(queryPath)
	case c.inputString.ok():
		c.query, c.queryField = c.inputString, list
	case c.lastUserText.ok():
		c.query = c.lastUserText
		c.queryField = list + "[" + strconv.Itoa(c.lastUserIdx) + "].content"
	default:
		if !c.extQuery.ok() {
			return nil, &gate.Error{Code: gate.CodeBadField, Field: list, Message: "no user message with text content to use as the query"}
		}
	}
	return c, nil
}

// listName is the member holding the conversation: "messages", or "input"
// in a Responses API request.
func (c *Chat) listName() string {
	if c.responses {
		return "input"
	}
	return "messages"
}

func (c *Chat) findLastUser() {
	b := c.body
	i := -1
	eachElement(b, c.messages.Start, func(m span) {
		i++
		if b[m.Start] != '{' {
			return
		}
		var role, content span
		eachMember(b, m.Start, func(k []byte, _, v span) {
			switch {
			case keyIs(k, "role"):
				role = v
			case keyIs(k, "content"):
				content = v
			}
		})
		if !strIs(b, role, "user") {
			return
		}
		c.lastUser, c.lastUserText, c.lastUserIdx = m, span{}, i
		if !content.ok() {
			return
		}
		switch b[content.Start] {
		case '"':
			c.lastUserText = content
		case '[':
			// Multimodal content: the first text part is the question
			// ("input_text" in a Responses API request).
			eachElement(b, content.Start, func(part span) {
				if c.lastUserText.ok() || b[part.Start] != '{' {
					return
				}
				if t, _, _ := member(b, part, "type"); !strIs(b, t, "text") && !(c.responses && strIs(b, t, "input_text")) {
					return
				}
				if txt, _, ok := member(b, part, "text"); ok && b[txt.Start] == '"' {
					c.lastUserText = txt
				}
			})
		}
	})
}

// Stream reports "stream": true.
func (c *Chat) Stream() bool { return c.stream }

// Model is the request's "model" as raw JSON (a string with its quotes), or
// nil when it has none.
func (c *Chat) Model() []byte {
	if !c.model.ok() {
		return nil
	}
	return c.body[c.model.Start:c.model.End]
}

// HasLastUser reports whether the messages hold a user message, which an
// inject or caveat rewrite needs. A Responses API "input" string is one.
func (c *Chat) HasLastUser() bool { return c.lastUser.ok() || c.inputString.ok() }

// QueryText is the question as the gate reads it: the extension's "query"
// when it sets one, else the question Parse chose ("" when neither is a
// string).
func (c *Chat) QueryText() string {
	if c.extQuery.ok() {
		return c.str(c.extQuery)
	}
	return c.str(c.query)
}

// AppendQueryEmbedding appends the extension's "query_embedding" array,
// compact (whitespace outside strings dropped: it may end up in a JSON
// line), or nothing when the extension has no non-empty array.
func (c *Chat) AppendQueryEmbedding(dst []byte) []byte {
	v := c.extEmbedding
	if !v.ok() || c.body[v.Start] != '[' || c.body[skipSpace(c.body, v.Start+1)] == ']' {
		return dst
	}
	return AppendCompact(dst, c.body[v.Start:v.End])
}

// AppendCompact appends the JSON text b without the whitespace between its
// tokens. b must be valid JSON (strings are copied as they are).
func AppendCompact(dst, b []byte) []byte {
	in := false
	for i := 0; i < len(b); i++ {
		ch := b[i]
		switch {
		case in && ch == '\\' && i+1 < len(b):
			dst = append(dst, ch, b[i+1])
			i++
			continue
		case ch == '"':
			in = !in
		case !in && (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'):
			continue
		}
		dst = append(dst, ch)
	}
	return dst
}

func (c *Chat) str(v span) string {
	if !v.ok() || c.body[v.Start] != '"' {
		return ""
	}
	s, err := jsonx.Parse(c.body[v.Start:v.End], 1)
	if err != nil {
		return ""
	}
	return s.Str()
}

func joinPath(p []string) string {
	s := ""
	for i, k := range p {
		if i > 0 {
			s += "."
		}
		s += k
	}
	return s
}
