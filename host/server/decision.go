package server

import (
	"encoding/json"
	"net/http"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// decisionView is the part of a decision JSON the server acts on. The
// decision bytes themselves are forwarded untouched; this is read beside them.
type decisionView struct {
	Action     string          `json:"action"`
	Level      string          `json:"level"`
	Confidence json.Number     `json:"confidence"`
	Signals    json.RawMessage `json:"signals"`
	Chunks     []struct {
		ID    string      `json:"id"`
		DocID string      `json:"doc_id"`
		Tag   string      `json:"tag"`
		Kept  bool        `json:"kept"`
		Score json.Number `json:"score"`
	} `json:"chunks"`
	Prompt *struct {
		Instructions string `json:"instructions"`
		Sources      string `json:"sources"`
		Minimal      string `json:"minimal"`
	} `json:"prompt"`
	Caveat  string `json:"caveat"`
	Refusal *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"refusal"`
	ConfidenceFactors []string        `json:"confidence_factors"`
	GapEvent          json.RawMessage `json:"gap_event"`
	Policy            policyRef       `json:"policy"`
}

func parseDecision(b []byte) (*decisionView, error) {
	d := new(decisionView)
	if err := json.Unmarshal(b, d); err != nil {
		return nil, err
	}
	if d.Action == "" {
		return nil, errBadDecision
	}
	return d, nil
}

type errString string

func (e errString) Error() string { return string(e) }

const errBadDecision = errString("the gate returned a decision without an action")

func (d *decisionView) confidence() float64 {
	f, _ := d.Confidence.Float64()
	return f
}

// confidenceRaw is the confidence as the decision JSON wrote it, so the
// header carries exactly the decision's digits.
func (d *decisionView) confidenceRaw() string {
	if d.Confidence == "" {
		return "0"
	}
	return string(d.Confidence)
}

// tags are the S# tags the prompt offers, in S1.. order.
func (d *decisionView) tags() []string {
	var t []string
	for _, c := range d.Chunks {
		if c.Tag != "" {
			t = append(t, c.Tag)
		}
	}
	return t
}

// hasGap reports whether the decision carries a gap_event object.
func (d *decisionView) hasGap() bool {
	return len(d.GapEvent) > 0 && d.GapEvent[0] == '{'
}

// hasSignal reports whether the decision reported the named signal.
func (d *decisionView) hasSignal(name string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(d.Signals, &m) != nil {
		return false
	}
	_, ok := m[name]
	return ok
}

// Header names, the same as the Envoy filter's (guest/envoy/filter).
const (
	HeaderAction      = "X-Ctxgate-Action" // inject|caveat|fallback|refuse|error|skip
	HeaderLevel       = "X-Ctxgate-Level"
	HeaderConfidence  = "X-Ctxgate-Confidence"
	HeaderPolicy      = "X-Ctxgate-Policy" // name@version
	HeaderRefusal     = "X-Ctxgate-Refusal"
	HeaderError       = "X-Ctxgate-Error"
	HeaderDecisionID  = "X-Ctxgate-Decision-Id"
	HeaderAnswerCheck = "X-Ctxgate-Answer-Check"
	HeaderSoftRefusal = "X-Ctxgate-Soft-Refusal"
	HeaderUnknownCite = "X-Ctxgate-Unknown-Citations"
	HeaderUncited     = "X-Ctxgate-Uncited-Sentences"
)

// setDecisionHeaders writes the decision's x-ctxgate-* headers to h.
func setDecisionHeaders(h http.Header, d *decisionView, id string) {
	h.Set(HeaderAction, d.Action)
	h.Set(HeaderLevel, d.Level)
	h.Set(HeaderConfidence, d.confidenceRaw())
	h.Set(HeaderPolicy, d.Policy.label())
	h.Set(HeaderDecisionID, id)
	if d.Refusal != nil && d.Refusal.Type != "" {
		h.Set(HeaderRefusal, d.Refusal.Type)
	}
}

// appendSufficiency writes seed 002 Phase 2's response object:
// {"score": confidence, "level": ..., "factors": [...]}.
func appendSufficiency(dst []byte, d *decisionView) []byte {
	dst = append(dst, `{"score":`...)
	dst = append(dst, d.confidenceRaw()...)
	dst = append(dst, `,"level":`...)
	dst = jsonx.AppendString(dst, d.Level)
	dst = append(dst, `,"factors":`...)
	f, _ := json.Marshal(d.ConfidenceFactors)
	if d.ConfidenceFactors == nil {
		f = []byte("[]")
	}
	dst = append(dst, f...)
	return append(dst, '}')
}
