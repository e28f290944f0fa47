package server

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/chat"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// CaveatDelivery says how a caveat decision's caveat reaches the end user.
// In every mode the caveat is also in the system message the gate adds
// (the same rewrite as the Envoy filter's), in X-Ctxgate-Action: caveat and
// in the sufficiency object.
type CaveatDelivery string

const (
	// CaveatPrefix (the default) puts the caveat and a blank line before
	// the answer's text: the user reads it first, whatever the model does,
	// and a stream carries it in its first text delta.
	CaveatPrefix CaveatDelivery = "prefix"
	// CaveatSuffix puts a blank line and the caveat after the answer's text
	// (a stream carries it in the delta before the text ends).
	CaveatSuffix CaveatDelivery = "suffix"
	// CaveatInstruction leaves the answer as the model writes it and asks
	// the model, in the system message, to begin with the caveat word for
	// word. Models usually comply; nothing checks that they did.
	CaveatInstruction CaveatDelivery = "instruction"
	// CaveatNone leaves the caveat in the system message only, for clients
	// that show it themselves from the headers or the sufficiency object.
	CaveatNone CaveatDelivery = "none"
)

// ParseCaveatDelivery reads a caveat_delivery setting ("" is the default,
// prefix).
func ParseCaveatDelivery(s string) (CaveatDelivery, error) {
	switch c := CaveatDelivery(s); c {
	case "":
		return CaveatPrefix, nil
	case CaveatPrefix, CaveatSuffix, CaveatInstruction, CaveatNone:
		return c, nil
	}
	return "", errors.New("caveat_delivery: want prefix, suffix, instruction or none, got " + strconv.Quote(s))
}

// caveatInstruction is what the instruction mode adds to the system
// message, after the caveat itself.
const caveatInstruction = "Begin your answer with the notice above, word for word, on a line of its own."

// upstreamBody is the body the upstream gets for an inject, caveat or
// fallback decision: gate/chat's rewrite, with the instruction mode's
// sentence after the caveat.
func (s *Server) upstreamBody(c *chat.Chat, d *decisionView) ([]byte, error) {
	p := chatPrompt(d)
	if p.Action != gate.ActionCaveat || s.opts.CaveatDelivery != CaveatInstruction || p.Caveat == "" {
		return c.Upstream(nil, p)
	}
	if !c.HasLastUser() {
		return c.Upstream(nil, p) // the rewrite's own error
	}
	sys := chat.SystemText(p.Instructions, p.Sources, p.Caveat+"\n"+caveatInstruction, true)
	return c.Rewrite(nil, sys, "", false), nil
}

// caveatText is the caveat the gateway adds to the answer's text ("" when
// none: not a caveat decision, or a mode that does not edit the answer).
func (s *Server) caveatText(d *decisionView) string {
	if gate.Action(d.Action) != gate.ActionCaveat {
		return ""
	}
	switch s.opts.CaveatDelivery {
	case CaveatPrefix, CaveatSuffix:
		return d.Caveat
	}
	return ""
}

// caveated is text with the caveat before or after it.
func caveated(mode CaveatDelivery, caveat, text string) string {
	if mode == CaveatSuffix {
		return text + "\n\n" + caveat
	}
	return caveat + "\n\n" + text
}

// sufficiencyMember is `"sufficiency":{...}`, the sufficient-context gateway's object.
func sufficiencyMember(d *decisionView) []byte {
	return appendSufficiency([]byte(`"sufficiency":`), d)
}

// chatAnswerEdited writes a chat.completion with the caveat in each
// choice's message content (when it has text) and the sufficiency member
// (replacing an upstream's own).
func chatAnswerEdited(root *jsonx.Value, mode CaveatDelivery, caveat string, d *decisionView) []byte {
	ed := func(dst []byte, path []string, v *jsonx.Value) ([]byte, bool) {
		if pathIs(path, "choices", "*", "message", "content") && nonEmptyString(v) {
			return jsonx.AppendString(dst, caveated(mode, caveat, v.Str())), true
		}
		return dst, false
	}
	return appendObject(nil, root, nil, ed, "sufficiency", sufficiencyMember(d))
}

// responseAnswerEdited writes a Responses API "response" with the caveat in
// its first output_text part that has text, and the sufficiency member.
func responseAnswerEdited(root *jsonx.Value, mode CaveatDelivery, caveat string, d *decisionView) []byte {
	oi, ci := firstTextPart(root)
	o, c := strconv.Itoa(oi), strconv.Itoa(ci)
	ed := func(dst []byte, path []string, v *jsonx.Value) ([]byte, bool) {
		if oi >= 0 && pathIs(path, "output", o, "content", c, "text") {
			return jsonx.AppendString(dst, caveated(mode, caveat, v.Str())), true
		}
		return dst, false
	}
	return appendObject(nil, root, nil, ed, "sufficiency", sufficiencyMember(d))
}

// firstTextPart is the output and content index of a response's first
// output_text part with text, or -1, -1.
func firstTextPart(root *jsonx.Value) (oi, ci int) {
	oi, ci = -1, -1
	chat.EachResponseText(root, func(o, c int, text string) bool {
		if text == "" {
			return true
		}
		oi, ci = o, c
		return false
	})
	return oi, ci
}

// chatStream edits a chat-completion stream: the caveat in each choice's
// first text delta (prefix) or in a delta before the choice finishes
// (suffix), and a final chunk of its own before data: [DONE], with no
// choices and the sufficiency object (where OpenAI puts the usage chunk;
// the SDKs' stream helpers keep the members of every chunk). The final
// chunk repeats the stream's id, created and model.
type chatStream struct {
	d      *decisionView
	mode   CaveatDelivery
	caveat string

	id, created, model []byte // raw JSON, from the last chunk that had them
	done               map[int]bool
	hadText            map[int]bool
	sentSufficiency    bool
}

func newChatStream(d *decisionView, mode CaveatDelivery, caveat string) *chatStream {
	return &chatStream{d: d, mode: mode, caveat: caveat, done: map[int]bool{}, hadText: map[int]bool{}}
}

func (c *chatStream) event(dst, ev []byte) ([]byte, error) {
	data, ok := eventData(ev)
	if !ok {
		return append(dst, ev...), nil
	}
	if bytes.HasPrefix(data, done) {
		return append(c.final(dst), ev...), nil
	}
	root, err := readEvent(data)
	if err != nil {
		return dst, err
	}
	if root.Kind() != jsonx.Object {
		return append(dst, ev...), nil
	}
	if v := root.Get("id"); v.Kind() == jsonx.String {
		c.id = jsonx.AppendValue(c.id[:0], v)
	}
	if v := root.Get("created"); v.Kind() == jsonx.Number {
		c.created = jsonx.AppendValue(c.created[:0], v)
	}
	if v := root.Get("model"); v.Kind() == jsonx.String {
		c.model = jsonx.AppendValue(c.model[:0], v)
	}
	if c.caveat == "" || root.Get("error") != nil {
		return relayEvent(dst, ev, &root, nil), nil
	}
	edit := map[string]string{} // choice array index -> new content
	choices := root.Get("choices")
	for i := 0; i < choices.Len(); i++ {
		ch := choices.Index(i)
		idx := intOf(ch.Get("index"))
		if idx < 0 {
			idx = i
		}
		content := ch.Get("delta").Get("content")
		hasText := nonEmptyString(content)
		if c.done[idx] {
			continue
		}
		switch c.mode {
		case CaveatPrefix:
			if hasText {
				edit[strconv.Itoa(i)] = caveated(CaveatPrefix, c.caveat, content.Str())
				c.done[idx] = true
			}
		case CaveatSuffix:
			c.hadText[idx] = c.hadText[idx] || hasText
			if ch.Get("finish_reason").Kind() != jsonx.String || !c.hadText[idx] {
				continue
			}
			c.done[idx] = true
			if hasText {
				edit[strconv.Itoa(i)] = caveated(CaveatSuffix, c.caveat, content.Str())
				continue
			}
			// The finishing chunk has no text: the caveat goes in a chunk
			// of its own just before it.
			dst = append(dst, "data: "...)
			dst = c.appendChunk(dst, func(dst []byte) []byte {
				dst = append(dst, `"choices":[{"index":`...)
				dst = strconv.AppendInt(dst, int64(idx), 10)
				dst = append(dst, `,"delta":{"content":`...)
				dst = jsonx.AppendString(dst, "\n\n"+c.caveat)
				return append(dst, `},"finish_reason":null}]`...)
			})
			dst = append(dst, "\n\n"...)
		}
	}
	if len(edit) == 0 {
		return relayEvent(dst, ev, &root, nil), nil
	}
	return relayEvent(dst, ev, &root, func(dst []byte, path []string, v *jsonx.Value) ([]byte, bool) {
		if pathIs(path, "choices", "*", "delta", "content") {
			if s, ok := edit[path[1]]; ok {
				return jsonx.AppendString(dst, s), true
			}
		}
		return dst, false
	}), nil
}

// appendChunk writes a chat.completion.chunk with the stream's id, created
// and model, and the members body writes.
func (c *chatStream) appendChunk(dst []byte, body func([]byte) []byte) []byte {
	dst = append(dst, '{')
	if len(c.id) > 0 {
		dst = append(append(append(dst, `"id":`...), c.id...), ',')
	}
	dst = append(dst, `"object":"chat.completion.chunk",`...)
	if len(c.created) > 0 {
		dst = append(append(append(dst, `"created":`...), c.created...), ',')
	}
	if len(c.model) > 0 {
		dst = append(append(append(dst, `"model":`...), c.model...), ',')
	}
	return append(body(dst), '}')
}

// final appends the sufficiency chunk, once.
func (c *chatStream) final(dst []byte) []byte {
	if c.sentSufficiency {
		return dst
	}
	c.sentSufficiency = true
	dst = append(dst, "data: "...)
	dst = c.appendChunk(dst, func(dst []byte) []byte {
		return append(append(dst, `"choices":[],`...), sufficiencyMember(c.d)...)
	})
	return append(dst, "\n\n"...)
}

// end: a stream that ended without [DONE] still gets its final chunk, if
// it sent any chunk at all.
func (c *chatStream) end(dst []byte) []byte {
	if len(c.id) == 0 {
		return dst
	}
	return c.final(dst)
}

// responsesStream edits a Responses API stream. The caveat goes with the
// answer's first output_text part: prefixed to its first text delta, or
// (suffix) in a delta of its own just before its output_text.done; the
// full texts the later events repeat (output_text.done, content_part.done,
// output_item.done, response.completed) carry it too, so the SDKs'
// accumulated response matches what was streamed. The sufficiency object is
// a member of response.completed's (or response.incomplete's) "response",
// as it is of a response that is not streamed.
type responsesStream struct {
	d      *decisionView
	mode   CaveatDelivery
	caveat string

	partSet         bool
	item            string
	output, content int
	applied         bool
}

func (r *responsesStream) event(dst, ev []byte) ([]byte, error) {
	data, ok := eventData(ev)
	if !ok || bytes.HasPrefix(data, done) {
		return append(dst, ev...), nil
	}
	root, err := readEvent(data)
	if err != nil {
		return dst, err
	}
	if root.Kind() != jsonx.Object {
		return append(dst, ev...), nil
	}
	typ := root.Get("type").Str()
	samePart := func() bool {
		return r.partSet && intOf(root.Get("output_index")) == r.output && intOf(root.Get("content_index")) == r.content
	}
	wrap := func(dst []byte, v *jsonx.Value) []byte {
		return jsonx.AppendString(dst, caveated(r.mode, r.caveat, v.Str()))
	}
	var ed jsonEditor
	o, c := strconv.Itoa(r.output), strconv.Itoa(r.content)
	switch typ {
	case "response.output_text.delta":
		if r.caveat == "" || r.applied {
			break
		}
		if !r.partSet {
			r.partSet, r.item = true, root.Get("item_id").Str()
			r.output, r.content = intOf(root.Get("output_index")), intOf(root.Get("content_index"))
		}
		if r.mode == CaveatPrefix && samePart() && nonEmptyString(root.Get("delta")) {
			r.applied = true
			ed = func(dst []byte, path []string, v *jsonx.Value) ([]byte, bool) {
				if pathIs(path, "delta") {
					return wrap(dst, v), true
				}
				return dst, false
			}
		}
	case "response.output_text.done":
		if !samePart() {
			break
		}
		if r.mode == CaveatSuffix && !r.applied && nonEmptyString(root.Get("text")) {
			r.applied = true
			dst = r.appendSuffixDelta(dst, ev, &root)
		}
		if r.applied {
			ed = func(dst []byte, path []string, v *jsonx.Value) ([]byte, bool) {
				if pathIs(path, "text") {
					return wrap(dst, v), true
				}
				return dst, false
			}
		}
	case "response.content_part.done":
		if r.applied && samePart() {
			ed = func(dst []byte, path []string, v *jsonx.Value) ([]byte, bool) {
				if pathIs(path, "part", "text") {
					return wrap(dst, v), true
				}
				return dst, false
			}
		}
	case "response.output_item.done":
		if r.applied && intOf(root.Get("output_index")) == r.output {
			ed = func(dst []byte, path []string, v *jsonx.Value) ([]byte, bool) {
				if pathIs(path, "item", "content", c, "text") {
					return wrap(dst, v), true
				}
				return dst, false
			}
		}
	case "response.completed", "response.incomplete":
		if root.Get("response").Kind() != jsonx.Object {
			break
		}
		applied := r.applied
		ed = func(dst []byte, path []string, v *jsonx.Value) ([]byte, bool) {
			switch {
			case pathIs(path, "response"):
				return appendObject(dst, v, path, ed, "sufficiency", sufficiencyMember(r.d)), true
			case applied && pathIs(path, "response", "output", o, "content", c, "text"):
				return wrap(dst, v), true
			}
			return dst, false
		}
	}
	return relayEvent(dst, ev, &root, ed), nil
}

// appendSuffixDelta writes an output_text.delta event carrying the suffix
// caveat, for the part the done event ev closes. It takes the done event's
// sequence number (event numbers stay in order; the SDKs do not require
// them to be unique).
func (r *responsesStream) appendSuffixDelta(dst, ev []byte, done *jsonx.Value) []byte {
	if hasEventLine(ev) {
		dst = append(dst, "event: response.output_text.delta\n"...)
	}
	dst = append(dst, `data: {"type":"response.output_text.delta"`...)
	if v := done.Get("sequence_number"); v.Kind() == jsonx.Number {
		dst = append(dst, `,"sequence_number":`...)
		dst = jsonx.AppendValue(dst, v)
	}
	dst = append(dst, `,"item_id":`...)
	dst = jsonx.AppendString(dst, r.item)
	dst = append(dst, `,"output_index":`...)
	dst = strconv.AppendInt(dst, int64(r.output), 10)
	dst = append(dst, `,"content_index":`...)
	dst = strconv.AppendInt(dst, int64(r.content), 10)
	dst = append(dst, `,"delta":`...)
	dst = jsonx.AppendString(dst, "\n\n"+r.caveat)
	return append(dst, ",\"logprobs\":[]}\n\n"...)
}

// hasEventLine reports whether an event names its type on an event: line.
func hasEventLine(ev []byte) bool {
	return len(ev) >= 6 && string(ev[:6]) == "event:"
}

func (r *responsesStream) end(dst []byte) []byte { return dst }

// done begins the data that ends a chat stream (the SDKs stop at any data
// that begins so).
var done = []byte("[DONE]")

// errUnreadableEvent ends a gated stream whose event the gateway cannot
// read: it could not add the caveat or the sufficiency object to it, nor
// remove the upstream's own, and a client's parser might read it all the
// same (Python reads NaN).
var errUnreadableEvent = answerError("the upstream sent a stream event whose JSON the gateway cannot read, so the gate could not edit it")

// readEvent parses an event's data as the clients read it.
func readEvent(data []byte) (jsonx.Value, error) {
	root, _, err := parseAsClients(data)
	if err != nil {
		return root, errUnreadableEvent
	}
	return root, nil
}

// relayEvent appends the event ev, whose data parsed as root: with ed's
// edits and without the upstream's own sufficiency (re-encoded), or as it
// came when there is neither. root is what a client reads in it, so ev's
// bytes mean the same to the client.
func relayEvent(dst, ev []byte, root *jsonx.Value, ed jsonEditor) []byte {
	if ed == nil && !hasSufficiency(root) {
		return append(dst, ev...)
	}
	return withEventData(dst, ev, appendEdited(nil, root, nil, withoutSufficiency(ed)))
}

// stripStream relays a stream the gate did not decide (skip, or error under
// fail_open) without the upstream's own sufficiency objects: the gate's is
// the only one. Events it cannot read go as they came.
type stripStream struct{}

func (stripStream) event(dst, ev []byte) ([]byte, error) {
	data, ok := eventData(ev)
	if !ok {
		return append(dst, ev...), nil
	}
	root, _, err := parseAsClients(data)
	if err != nil {
		return append(dst, ev...), nil
	}
	return relayEvent(dst, ev, &root, nil), nil
}

func (stripStream) end(dst []byte) []byte { return dst }
