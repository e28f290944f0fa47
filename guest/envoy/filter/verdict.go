package filter

import (
	"strconv"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// verdict is the part of a decision the filter acts on. It is read from the
// decision JSON that Engine.Evaluate writes, not from a struct, so every
// string the filter forwards (the <sources> block, the confidence header) is
// exactly the bytes every other host gets for the same request.
type verdict struct {
	Action     string
	Level      string
	Confidence string // as the decision JSON writes it
	ConfBP     uint64 // confidence in basis points, for the histogram

	Instructions, Sources, Minimal string
	Caveat                         string
	RefusalType, RefusalMessage    string
	Tags                           []string // the S# tags the prompt offers
	Policy                         string   // name@version
}

func parseVerdict(decision []byte) (*verdict, error) {
	d, err := jsonx.Parse(decision, 32)
	if err != nil || d.Kind() != jsonx.Object {
		return nil, &gate.Error{Code: gate.CodeInternal, Message: "the gate returned an unreadable decision"}
	}
	v := &verdict{
		Action:     d.Get("action").Str(),
		Level:      d.Get("level").Str(),
		Confidence: d.Get("confidence").Raw(),
		Caveat:     d.Get("caveat").Str(),
	}
	if v.Confidence == "" {
		v.Confidence = "0"
	}
	if c := d.Get("confidence").Float(); c > 0 {
		v.ConfBP = uint64(c*10000 + 0.5)
	}
	if p := d.Get("prompt"); p.Kind() == jsonx.Object {
		v.Instructions = p.Get("instructions").Str()
		v.Sources = p.Get("sources").Str()
		v.Minimal = p.Get("minimal").Str()
	}
	if r := d.Get("refusal"); r.Kind() == jsonx.Object {
		v.RefusalType = r.Get("type").Str()
		v.RefusalMessage = r.Get("message").Str()
	}
	chunks := d.Get("chunks")
	for i := 0; i < chunks.Len(); i++ {
		if t := chunks.Index(i).Get("tag").Str(); t != "" {
			v.Tags = append(v.Tags, t)
		}
	}
	pol := d.Get("policy")
	v.Policy = pol.Get("name").Str()
	if ver := pol.Get("version").Str(); ver != "" {
		v.Policy += "@" + ver
	}
	switch gate.Action(v.Action) {
	case gate.ActionInject, gate.ActionCaveat, gate.ActionFallback, gate.ActionRefuse:
	default:
		return nil, &gate.Error{Code: gate.CodeInternal, Message: "the gate returned an unknown action " + strconv.Quote(v.Action)}
	}
	return v, nil
}

// systemText is the system message an inject or caveat decision adds: the
// constraint instructions, the <sources> block, and for caveat the caveat.
func (v *verdict) systemText() string {
	s := v.Instructions
	if v.Sources != "" {
		if s != "" {
			s += "\n\n"
		}
		s += v.Sources
	}
	if v.Action == string(gate.ActionCaveat) && v.Caveat != "" {
		if s != "" {
			s += "\n\n"
		}
		s += v.Caveat
	}
	return s
}
