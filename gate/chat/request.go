package chat

import (
	"strings"

	"github.com/ctxgate/ctxgate/gate"
)

// GateRequest appends the gate request spliced from the body's own bytes:
// the extension object's members verbatim, then "query" and "chunks" when
// the extension does not set them. The core's decoder validates all of it.
func (c *Chat) GateRequest(dst []byte) []byte {
	b := c.body
	dst = append(dst, '{')
	n := 0
	sep := func() {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
	}
	if c.ext.ok() {
		eachMember(b, c.ext.Start, func(_ []byte, m, _ span) {
			sep()
			dst = append(dst, b[m.Start:m.End]...)
		})
	}
	if !c.extQuery.ok() && c.query.ok() {
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

// UserField renames the field of a core error from the spliced gate
// request's names to the body's, so "chunks[2].scores.vector" reads
// "documents[2].scores.vector": the client never sent a "chunks" member.
// Errors that are not *gate.Error, or name no field, are returned as they are.
func (c *Chat) UserField(err error) error {
	ge, ok := err.(*gate.Error)
	if !ok || ge == nil || ge.Field == "" {
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
	case root == "query" && c.queryField != "" && !c.extQuery.ok():
		f = c.queryField + rest
	case c.ext.ok():
		f = ExtensionField + "." + f
	}
	return &gate.Error{Code: ge.Code, Field: f, Message: ge.Message}
}
