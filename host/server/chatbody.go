package server

// The OpenAI chat-body mapping itself (documents, question, gate request,
// rewrite, refusal replies) is package gate/chat, the same code the Envoy
// filter runs, so gateway mode and the filter gate and rewrite a body to the
// same bytes. This file holds only what the server adds to it.

import (
	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/chat"
)

// extensionField is the member carrying retrieval results in the gate's own
// request shape; documents_path may not name it.
const extensionField = chat.ExtensionField

// chatPrompt is what the upstream body is rewritten with, from the decision.
func chatPrompt(d *decisionView) *chat.Prompt {
	p := &chat.Prompt{Action: gate.Action(d.Action), Caveat: d.Caveat}
	if d.Prompt != nil {
		p.Instructions, p.Sources, p.Minimal = d.Prompt.Instructions, d.Prompt.Sources, d.Prompt.Minimal
	}
	return p
}

// refusalCompletion is the filter's local refusal (chat.RefusalCompletion)
// plus the sufficient-context gateway's "sufficiency" member, spliced before
// its closing brace.
func refusalCompletion(dst, model []byte, message string, d *decisionView) []byte {
	dst = chat.RefusalCompletion(dst, model, message)
	dst = append(dst[:len(dst)-1], `,"sufficiency":`...)
	dst = appendSufficiency(dst, d)
	return append(dst, '}')
}
