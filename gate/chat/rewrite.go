package chat

import (
	"strconv"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/internal/view"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// Prompt is the part of a decision the upstream body is rewritten with: the
// action and the decision's prompt strings and caveat, byte for byte.
type Prompt struct {
	Action                         gate.Action
	Instructions, Sources, Minimal string
	Caveat                         string
}

// Upstream appends the body the upstream gets for an inject, caveat or
// fallback decision: inject and caveat add a system message (SystemText)
// right before the last user message; fallback replaces that message's
// content with the minimal prompt (or only drops the documents when there
// is no minimal prompt or no user message). An inject or caveat without a
// user message is ErrNoUserMessage. A refusal has no upstream body (the
// caller answers it locally): like an unknown action, it is an error.
func (c *Chat) Upstream(dst []byte, p *Prompt) ([]byte, error) {
	var sys []byte
	return c.UpstreamUsing(dst, &sys, p)
}

// UpstreamUsing is Upstream with the system message's text built in *sys,
// a buffer the caller reuses from one request to the next: the text holds
// the whole sources block, and a new string of it per request would be
// garbage of most of a megabyte for a large one (which a TinyGo module may
// never get back; gate.Engine.DecideInPlace says why).
func (c *Chat) UpstreamUsing(dst []byte, sys *[]byte, p *Prompt) ([]byte, error) {
	switch p.Action {
	case gate.ActionInject, gate.ActionCaveat:
		if !c.HasLastUser() {
			if c.responses {
				return dst, errNoUserInput
			}
			return dst, ErrNoUserMessage
		}
		*sys = AppendSystemText((*sys)[:0], p.Instructions, p.Sources, p.Caveat, p.Action == gate.ActionCaveat)
		return c.Rewrite(dst, view.String(*sys), "", false), nil
	case gate.ActionFallback:
		if p.Minimal != "" && c.HasLastUser() {
			return c.Rewrite(dst, "", p.Minimal, true), nil
		}
		return c.Rewrite(dst, "", "", false), nil
	case gate.ActionRefuse:
		return dst, &gate.Error{Code: gate.CodeInternal, Message: "a refusal is answered locally; it has no upstream body"}
	}
	return dst, &gate.Error{Code: gate.CodeInternal, Message: "the gate returned an unknown action " + strconv.Quote(string(p.Action))}
}

// errNoUserInput is ErrNoUserMessage for a Responses API request.
var errNoUserInput = &gate.Error{Code: gate.CodeBadField, Field: "input",
	Message: "the sources go before the last user message, and there is none"}

// SystemText is the system message an inject or caveat decision adds: the
// constraint instructions, the <sources> block, and for caveat the caveat,
// separated by blank lines.
func SystemText(instructions, sources, caveat string, isCaveat bool) string {
	return string(AppendSystemText(nil, instructions, sources, caveat, isCaveat))
}

// AppendSystemText appends SystemText's text to dst.
func AppendSystemText(dst []byte, instructions, sources, caveat string, isCaveat bool) []byte {
	start := len(dst)
	dst = append(dst, instructions...)
	if sources != "" {
		if len(dst) > start {
			dst = append(dst, "\n\n"...)
		}
		dst = append(dst, sources...)
	}
	if isCaveat && caveat != "" {
		if len(dst) > start {
			dst = append(dst, "\n\n"...)
		}
		dst = append(dst, caveat...)
	}
	return dst
}

// Rewrite appends the body the upstream gets: without the documents and the
// extension field, with a system message holding systemText (when set) right
// before the last user message, and that message's content replaced by
// userText when replaceUser is set. Root members keep their bytes; only the
// separators between them are normalised.
func (c *Chat) Rewrite(dst []byte, systemText, userText string, replaceUser bool) []byte {
	b := c.body
	start := len(dst)
	dst = append(dst, '{')
	n := 0
	eachMember(b, c.root.Start, func(k []byte, m, v span) {
		if keyIs(k, ExtensionField) || (c.documentsMember.ok() && m == c.documentsMember) {
			return
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		if v == c.inputString && (systemText != "" || replaceUser) {
			// A Responses API "input" string is the user's message: it
			// becomes a list, so the system message can go before it.
			dst = append(dst, `"input":[`...)
			if systemText != "" {
				dst = append(dst, `{"role":"system","content":`...)
				dst = jsonx.AppendString(dst, systemText)
				dst = append(dst, "},"...)
			}
			dst = append(dst, `{"role":"user","content":`...)
			if replaceUser {
				dst = jsonx.AppendString(dst, userText)
			} else {
				dst = append(dst, b[v.Start:v.End]...)
			}
			dst = append(dst, "}]"...)
			return
		}
		if v != c.messages {
			dst = append(dst, b[m.Start:m.End]...)
			return
		}
		dst = append(dst, '"')
		dst = append(dst, c.listName()...)
		dst = append(dst, `":[`...)
		i := 0
		eachElement(b, v.Start, func(e span) {
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
		dst = append(dst[:start], removeNested(dst[start:], c.docsPath)...)
	}
	return dst
}

// appendUserWithContent copies the user message object e with its content
// replaced by the string text.
func (c *Chat) appendUserWithContent(dst []byte, e span, text string) []byte {
	b := c.body
	dst = append(dst, '{')
	n := 0
	eachMember(b, e.Start, func(k []byte, m, _ span) {
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

// removeNested returns b without the member at the end of keys, in its
// parent object. It is used for a documents path below the root, after the
// root members were rewritten (the parents were copied verbatim, so the path
// still holds). The result is a new slice; b is not changed.
func removeNested(b []byte, keys []string) []byte {
	if len(keys) < 2 {
		return b
	}
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
	eachMember(b, parent.Start, func(k []byte, m, _ span) {
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
