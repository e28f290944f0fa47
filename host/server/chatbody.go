package server

// The OpenAI chat-body mapping itself (documents, question, gate request,
// rewrite, refusal replies) is package gate/chat, the same code the Envoy
// filter runs, so gateway mode and the filter gate and rewrite a body to the
// same bytes. This file holds only what the server adds to it.

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/chat"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// extensionField is the member carrying retrieval results in the gate's own
// request shape; documents_path may not name it.
const extensionField = chat.ExtensionField

// chatAPI is POST /v1/chat/completions.
var chatAPI = &gatedAPI{
	route:  "chat_completions",
	parse:  chat.Parse,
	answer: chat.AnswerOf,
	edited: chatAnswerEdited,
	stream: func(d *decisionView, mode CaveatDelivery, caveat string) streamEditor {
		return newChatStream(d, mode, caveat)
	},
	refuse: (*Server).refuseChat,
}

// chatPrompt is what the upstream body is rewritten with, from the decision.
func chatPrompt(d *decisionView) *chat.Prompt {
	p := &chat.Prompt{Action: gate.Action(d.Action), Caveat: d.Caveat}
	if d.Prompt != nil {
		p.Instructions, p.Sources, p.Minimal = d.Prompt.Instructions, d.Prompt.Sources, d.Prompt.Minimal
	}
	return p
}

// refuseChat answers a hard refusal locally (the upstream is never called):
// a chat.completion, or the same as a stream, with an id of its own
// (chatcmpl-ctxgate- and 128 random bits), the time of the answer, and the
// sufficient-context gateway's sufficiency member (on a stream, in a final chunk before [DONE]).
func (s *Server) refuseChat(w http.ResponseWriter, c *chat.Chat, d *decisionView) {
	id, created := randomID("chatcmpl-ctxgate-"), time.Now().Unix()
	msg := refusalMessage(d)
	if !c.Stream() {
		b := chat.RefusalCompletionAs(nil, id, created, c.Model(), msg)
		b = append(append(append(b[:len(b)-1], ','), sufficiencyMember(d)...), '}')
		writeJSON(w, http.StatusOK, b)
		return
	}
	b := chat.RefusalStreamAs(nil, id, created, c.Model(), msg)
	b = b[:len(b)-len(chat.StreamDone)]
	cs := newChatStream(d, "", "")
	cs.id, cs.model = jsonx.AppendString(nil, id), c.Model()
	if cs.model == nil {
		cs.model = []byte(`"ctxgate"`) // as RefusalStreamAs writes it
	}
	cs.created = strconv.AppendInt(nil, created, 10)
	b = append(cs.final(b), chat.StreamDone...)
	writeStream(w, b)
}

// writeStream answers a whole event stream at once.
func writeStream(w http.ResponseWriter, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// randomID is prefix and 128 random bits in hex: an id no client can guess
// or collide with.
func randomID(prefix string) string {
	var b [16]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
