package server

import (
	"net/http"
	"time"

	"github.com/ctxgate/ctxgate/gate/chat"
)

// responsesAPI is POST /v1/responses. A Responses API request that carries
// retrieved documents the way a chat request does (a "documents" member at
// documents_path, or the ctxgate extension) is gated exactly like one:
// gate/chat reads its "input" (a string, or a list of items) where a chat
// body has "messages". One without them is forwarded unchanged, as every
// other Responses API call (GET /v1/responses/{id}, ...) is.
var responsesAPI = &gatedAPI{
	route:  "responses",
	parse:  chat.ParseResponses,
	answer: chat.ResponseText,
	edited: responseAnswerEdited,
	stream: func(d *decisionView, mode CaveatDelivery, caveat string) streamEditor {
		return &responsesStream{d: d, mode: mode, caveat: caveat}
	},
	refuse: (*Server).refuseResponse,
}

// refuseResponse answers a hard refusal of a Responses API request locally:
// a completed "response" with the refusal as its output_text, or the same
// as the Responses API's events, with ids of its own (resp_ctxgate_ and
// msg_ctxgate_, 128 random bits each), the time of the answer and the
// sufficiency member.
func (s *Server) refuseResponse(w http.ResponseWriter, c *chat.Chat, d *decisionView) {
	ids := chat.ResponseIDs{Response: randomID("resp_ctxgate_"), Message: randomID("msg_ctxgate_"), Created: time.Now().Unix()}
	msg := refusalMessage(d)
	addSufficiency := func(dst []byte) []byte { return append(append(dst, ','), sufficiencyMember(d)...) }
	if c.Stream() {
		writeStream(w, chat.ResponseRefusalStream(nil, ids, c.Model(), msg, addSufficiency))
		return
	}
	b := chat.ResponseRefusal(nil, ids, c.Model(), msg)
	writeJSON(w, http.StatusOK, append(addSufficiency(b[:len(b)-1]), '}'))
}
