package filter

import (
	"strconv"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/chat"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// verdict is the part of a decision the filter acts on, with every value
// the filter forwards written exactly as the decision JSON writes it: the
// prompt strings are the decision's own, and the confidence header is
// formatted by the same jsonx.AppendFloat the decision encoder uses. So the
// <sources> block and the headers are byte-identical to what Engine.Evaluate
// returns in every other host, without encoding and re-parsing the decision.
type verdict struct {
	Action     string
	Level      string
	Confidence string // as the decision JSON writes it
	ConfBP     uint64 // confidence in basis points, for the histogram

	Prompt                      chat.Prompt // what the upstream body is rewritten with
	RefusalType, RefusalMessage string
	Tags                        []string // the S# tags the prompt offers
	Policy                      string   // name@version
}

func newVerdict(d *gate.Decision) (*verdict, error) {
	switch d.Action {
	case gate.ActionInject, gate.ActionCaveat, gate.ActionFallback, gate.ActionRefuse:
	default:
		return nil, &gate.Error{Code: gate.CodeInternal, Message: "the gate returned an unknown action " + strconv.Quote(string(d.Action))}
	}
	v := &verdict{
		Action:     string(d.Action),
		Level:      string(d.Level),
		Confidence: string(jsonx.AppendFloat(nil, d.Confidence)),
		Prompt:     chat.Prompt{Action: d.Action, Caveat: d.Caveat},
		Policy:     d.Policy.Name,
	}
	if c := jsonx.Round6(d.Confidence); c > 0 {
		v.ConfBP = uint64(c*10000 + 0.5)
	}
	if d.Policy.Version != "" {
		v.Policy += "@" + d.Policy.Version
	}
	if p := d.Prompt; p != nil {
		v.Prompt.Instructions, v.Prompt.Sources, v.Prompt.Minimal = p.Instructions, p.Sources, p.Minimal
	}
	if r := d.Refusal; r != nil {
		v.RefusalType, v.RefusalMessage = r.Type, r.Message
	}
	for i := range d.Chunks {
		if t := d.Chunks[i].Tag; t != "" {
			v.Tags = append(v.Tags, t)
		}
	}
	return v, nil
}
