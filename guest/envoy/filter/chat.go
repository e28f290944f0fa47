package filter

import (
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// maxBodyDepth bounds JSON nesting in bodies; chat requests nest a few levels.
const maxBodyDepth = 64

// chat is what the filter found in one chat-completion request body: the byte
// spans it reads, removes or replaces. Everything else is copied verbatim.
type chat struct {
	body []byte
	root span

	messages     span   // the "messages" array; !ok() when absent
	lastUser     span   // the last message with "role": "user"
	lastUserText span   // the string holding its text (content, or its first text part)
	query        span   // the JSON string the gate reads as the question
	queryField   string // where the question is, for error messages
	lastUserIdx  int

	documents       span // the documents array (DocumentsPath)
	documentsMember span // its "key": value bytes when it is a root member
	docsPath        []string
	ext             span // the ctxgate extension object
	stream          bool
	model           span
}

// errNotGated reports a body the filter has nothing to do with: it carries
// neither documents nor the extension field. Such requests pass untouched,
// so a proxy in front of a mixed fleet gates only RAG traffic.
var errNotGated = &gate.Error{Code: "not_gated", Message: "no retrieved documents in the request"}

// parseChat locates the members the filter needs. Errors are *gate.Error
// values naming the field, like the core's.
func parseChat(body []byte, cfg *Config) (*chat, error) {
	if _, err := jsonx.Parse(body, maxBodyDepth); err != nil {
		return nil, &gate.Error{Code: gate.CodeBadJSON, Message: "request body is not valid JSON: " + err.Error()}
	}
	c := &chat{body: body, root: span{skipSpace(body, 0), len(body)}, docsPath: cfg.DocumentsPath}
	if body[c.root.Start] != '{' {
		return nil, &gate.Error{Code: gate.CodeBadJSON, Message: "request body must be a JSON object"}
	}

	if v, ok := path(body, c.root, cfg.DocumentsPath); ok {
		c.documents = v
		if len(cfg.DocumentsPath) == 1 {
			_, c.documentsMember, _ = member(body, c.root, cfg.DocumentsPath[0])
		}
		if body[v.Start] != '[' {
			return nil, &gate.Error{Code: gate.CodeBadField, Field: joinPath(cfg.DocumentsPath), Message: "must be an array of chunks"}
		}
	}
	if v, _, ok := member(body, c.root, ExtensionField); ok {
		if body[v.Start] != '{' {
			return nil, &gate.Error{Code: gate.CodeBadField, Field: ExtensionField, Message: "must be an object in the gate's request shape"}
		}
		c.ext = v
	}
	if !c.documents.ok() && !c.ext.ok() {
		return nil, errNotGated
	}
	if c.documents.ok() && c.ext.ok() {
		if _, _, dup := member(body, c.ext, "chunks"); dup {
			return nil, &gate.Error{Code: gate.CodeBadField, Field: joinPath(cfg.DocumentsPath),
				Message: "documents and ctxgate.chunks are both set; send one"}
		}
	}

	if v, _, ok := member(body, c.root, "stream"); ok && string(body[v.Start:v.End]) == "true" {
		c.stream = true
	}
	if v, _, ok := member(body, c.root, "model"); ok && body[v.Start] == '"' {
		c.model = v
	}
	if v, _, ok := member(body, c.root, "messages"); ok {
		if body[v.Start] != '[' {
			return nil, &gate.Error{Code: gate.CodeBadField, Field: "messages", Message: "must be an array"}
		}
		c.messages = v
		c.findLastUser()
	}

	switch {
	case len(cfg.QueryPath) > 0:
		v, ok := path(body, c.root, cfg.QueryPath)
		if !ok || body[v.Start] != '"' {
			return nil, &gate.Error{Code: gate.CodeBadField, Field: joinPath(cfg.QueryPath), Message: "missing, or not a string"}
		}
		c.query, c.queryField = v, joinPath(cfg.QueryPath)
	case c.lastUserText.ok():
		c.query = c.lastUserText
		c.queryField = "messages[" + strconv.Itoa(c.lastUserIdx) + "].content"
	default:
		if _, _, ok := member(body, c.ext, "query"); !ok {
			return nil, &gate.Error{Code: gate.CodeBadField, Field: "messages", Message: "no user message with text content to use as the query"}
		}
	}
	return c, nil
}

func (c *chat) findLastUser() {
	b := c.body
	i := -1
	eachElement(b, c.messages.Start, 0, func(m span) {
		i++
		if b[m.Start] != '{' {
			return
		}
		role, _, _ := member(b, m, "role")
		if string(b[role.Start:role.End]) != `"user"` {
			return
		}
		c.lastUser, c.lastUserText, c.lastUserIdx = m, span{}, i
		content, _, ok := member(b, m, "content")
		if !ok {
			return
		}
		switch b[content.Start] {
		case '"':
			c.lastUserText = content
		case '[':
			// Multimodal content: the first text part is the question.
			eachElement(b, content.Start, 0, func(part span) {
				if c.lastUserText.ok() || b[part.Start] != '{' {
					return
				}
				t, _, _ := member(b, part, "type")
				if string(b[t.Start:t.End]) != `"text"` {
					return
				}
				if txt, _, ok := member(b, part, "text"); ok && b[txt.Start] == '"' {
					c.lastUserText = txt
				}
			})
		}
	})
}

// gateRequest splices the gate request JSON from the body's own bytes: the
// extension object's members verbatim, then "query" and "chunks" when the
// extension does not set them. The core's decoder validates all of it.
func (c *chat) gateRequest(dst []byte) []byte {
	b := c.body
	dst = append(dst, '{')
	n := 0
	sep := func() {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
	}
	hasQuery := false
	if c.ext.ok() {
		eachMember(b, c.ext.Start, 0, func(k []byte, m, _ span) {
			if keyIs(k, "query") {
				hasQuery = true
			}
			sep()
			dst = append(dst, b[m.Start:m.End]...)
		})
	}
	if !hasQuery && c.query.ok() {
		sep()
		dst = append(dst, `"query":`...)
		dst = append(dst, b[c.query.Start:c.query.End]...)
	}
	if c.documents.ok() {
		sep()
		dst = append(dst, `"chunks":`...)
		dst = append(dst, b[c.documents.Start:c.documents.End]...)
	}
	return append(dst, '}')
}

// userField renames the field of a core error from the spliced gate
// request's names to the body's, so "chunks[2].scores.vector" reads
// "documents[2].scores.vector": the client never sent a "chunks" member.
func (c *chat) userField(err error) error {
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
	case root == "chunks" && c.documents.ok():
		f = joinPath(c.docsPath) + rest
	case root == "query" && c.queryField != "" && !c.extHas("query"):
		f = c.queryField + rest
	case c.ext.ok():
		f = ExtensionField + "." + f
	}
	return &gate.Error{Code: ge.Code, Field: f, Message: ge.Message}
}

func (c *chat) extHas(key string) bool {
	_, _, ok := member(c.body, c.ext, key)
	return ok
}

// rewrite returns the body the upstream gets: without the documents and the
// extension field, and with the messages changed by edit. Root members keep
// their bytes; only the separators between them are normalised.
func (c *chat) rewrite(dst []byte, systemText string, userText string, replaceUser bool) []byte {
	b := c.body
	dst = append(dst, '{')
	n := 0
	eachMember(b, c.root.Start, 0, func(k []byte, m, v span) {
		if keyIs(k, ExtensionField) || (c.documentsMember.ok() && m == c.documentsMember) {
			return
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		if v != c.messages {
			dst = append(dst, b[m.Start:m.End]...)
			return
		}
		dst = append(dst, `"messages":[`...)
		i := 0
		eachElement(b, v.Start, 0, func(e span) {
			if i > 0 {
				dst = append(dst, ',')
			}
			i++
			if e != c.lastUser {
				dst = append(dst, b[e.Start:e.End]...)
				return
			}
			// The gate's instructions sit right before the question they
			// govern, after any system prompt of the application's own.
			if systemText != "" {
				dst = append(dst, `{"role":"system","content":`...)
				dst = jsonx.AppendString(dst, systemText)
				dst = append(dst, "},"...)
			}
			if !replaceUser {
				dst = append(dst, b[e.Start:e.End]...)
				return
			}
			dst = c.appendUserWithContent(dst, e, userText)
		})
		dst = append(dst, ']')
	})
	dst = append(dst, '}')
	if c.documents.ok() && !c.documentsMember.ok() {
		dst = removeNested(dst, c.docsPath)
	}
	return dst
}

// appendUserWithContent copies the user message object e with its content
// replaced by the string text.
func (c *chat) appendUserWithContent(dst []byte, e span, text string) []byte {
	b := c.body
	dst = append(dst, '{')
	n := 0
	eachMember(b, e.Start, 0, func(k []byte, m, _ span) {
		if keyIs(k, "content") {
			return
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, b[m.Start:m.End]...)
	})
	if n > 0 {
		dst = append(dst, ',')
	}
	dst = append(dst, `"content":`...)
	dst = jsonx.AppendString(dst, text)
	return append(dst, '}')
}

// removeNested drops the member at the end of keys from its parent object in
// b. It is used for a documents path below the root, after the root members
// were rewritten (the parents were copied verbatim, so the path still holds).
func removeNested(b []byte, keys []string) []byte {
	root := span{skipSpace(b, 0), len(b)}
	parent, ok := path(b, root, keys[:len(keys)-1])
	if !ok || b[parent.Start] != '{' {
		return b
	}
	last := keys[len(keys)-1]
	out := make([]byte, 0, len(b))
	out = append(out, b[:parent.Start]...)
	out = append(out, '{')
	n := 0
	eachMember(b, parent.Start, 0, func(k []byte, m, _ span) {
		if keyIs(k, last) {
			return
		}
		if n > 0 {
			out = append(out, ',')
		}
		n++
		out = append(out, b[m.Start:m.End]...)
	})
	out = append(out, '}')
	return append(out, b[parent.End:]...)
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
