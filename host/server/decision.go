package server

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/ctxgate/ctxgate/gate/chat"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// decisionView is the part of a decision JSON the server acts on. The
// decision bytes themselves are forwarded untouched; this is read beside them
// with the core's own JSON parser (about twice as fast as encoding/json here,
// and the decision is parsed on every request).
type decisionView struct {
	Action     string
	Level      string
	Band       string
	Confidence json.Number // as the decision wrote it
	Signals    []byte      // the signals object, compact JSON
	Chunks     []chunkView
	Prompt     *promptView
	Caveat     string
	Refusal    *refusalView
	// ConfidenceFactors is never nil for a decision the core wrote.
	ConfidenceFactors []string
	GapEvent          []byte // the gap_event object's bytes, nil when null
	Policy            policyRef

	// request and path are the gate request decided and the endpoint, for
	// the decision log; remember drops request once it is logged.
	request []byte
	path    string
}

type chunkView struct {
	ID, DocID, Tag, Reason string
	Kept                   bool
	Score                  json.Number
}

type promptView struct{ Instructions, Sources, Minimal string }

type refusalView struct{ Type, Message string }

func parseDecision(b []byte) (*decisionView, error) {
	return readDecision(b, true)
}

// readDecision walks the decision's top-level members and reads only those
// it needs: the prompt, which holds every kept chunk's text, is skipped
// unless withPrompt (gateway mode rewrites the messages with it). The core
// wrote these bytes, so they are valid JSON; the walk (walk.go) does not
// parse them again, and it copies what it keeps, so the view never holds the
// decision's buffer (a record kept for feedback would otherwise pin it).
func readDecision(b []byte, withPrompt bool) (*decisionView, error) {
	d := &decisionView{}
	var bad error
	str := func(val []byte) string {
		s, err := stringValue(val)
		if err != nil {
			bad = err
		}
		return s
	}
	ok := walkMembers(b, func(key, val []byte) {
		switch string(key) {
		case "action":
			d.Action = str(val)
		case "level":
			d.Level = str(val)
		case "band":
			d.Band = str(val)
		case "confidence":
			d.Confidence = json.Number(val)
		case "caveat":
			d.Caveat = str(val)
		case "signals":
			if val[0] == '{' {
				d.Signals = append([]byte(nil), val...)
			}
		case "chunks":
			d.Chunks = make([]chunkView, 0, 8)
			walkElements(val, func(el []byte) {
				var c chunkView
				walkMembers(el, func(k, v []byte) {
					switch string(k) {
					case "id":
						c.ID = str(v)
					case "doc_id":
						c.DocID = str(v)
					case "tag":
						c.Tag = str(v)
					case "reason":
						c.Reason = str(v)
					case "kept":
						c.Kept = string(v) == "true"
					case "score":
						if isNumber(v) {
							c.Score = json.Number(v)
						}
					}
				})
				d.Chunks = append(d.Chunks, c)
			})
		case "prompt":
			if withPrompt && val[0] == '{' {
				p := &promptView{}
				walkMembers(val, func(k, v []byte) {
					switch string(k) {
					case "instructions":
						p.Instructions = str(v)
					case "sources":
						p.Sources = str(v)
					case "minimal":
						p.Minimal = str(v)
					}
				})
				d.Prompt = p
			}
		case "refusal":
			if val[0] == '{' {
				r := &refusalView{}
				walkMembers(val, func(k, v []byte) {
					switch string(k) {
					case "type":
						r.Type = str(v)
					case "message":
						r.Message = str(v)
					}
				})
				d.Refusal = r
			}
		case "confidence_factors":
			d.ConfidenceFactors = []string{}
			walkElements(val, func(el []byte) { d.ConfidenceFactors = append(d.ConfidenceFactors, str(el)) })
		case "gap_event":
			if val[0] == '{' {
				d.GapEvent = append([]byte(nil), val...)
			}
		case "policy":
			walkMembers(val, func(k, v []byte) {
				switch string(k) {
				case "name":
					d.Policy.Name = str(v)
				case "version":
					d.Policy.Version = str(v)
				case "sha256":
					d.Policy.SHA256 = str(v)
				}
			})
		}
	})
	switch {
	case !ok:
		return nil, errString("the gate returned a decision that is not a JSON object")
	case bad != nil:
		return nil, bad
	case d.Action == "":
		return nil, errBadDecision
	}
	return d, nil
}

// isNumber reports whether val starts like a JSON number.
func isNumber(val []byte) bool {
	return len(val) > 0 && (val[0] == '-' || val[0] >= '0' && val[0] <= '9')
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
	return bytes.Contains(d.Signals, []byte(`"`+name+`":`))
}

// Header names: gate/chat's (the Envoy filter sets the same), kept in the
// canonical form http.Header stores, so Set need not canonicalise them on
// every request.
var (
	HeaderAction      = http.CanonicalHeaderKey(chat.HeaderAction)
	HeaderLevel       = http.CanonicalHeaderKey(chat.HeaderLevel)
	HeaderConfidence  = http.CanonicalHeaderKey(chat.HeaderConfidence)
	HeaderPolicy      = http.CanonicalHeaderKey(chat.HeaderPolicy)
	HeaderRefusal     = http.CanonicalHeaderKey(chat.HeaderRefusal)
	HeaderError       = http.CanonicalHeaderKey(chat.HeaderError)
	HeaderDecisionID  = http.CanonicalHeaderKey(chat.HeaderDecisionID)
	HeaderAnswerCheck = http.CanonicalHeaderKey(chat.HeaderAnswerCheck)
	HeaderSoftRefusal = http.CanonicalHeaderKey(chat.HeaderSoftRefusal)
	HeaderUnknownCite = http.CanonicalHeaderKey(chat.HeaderUnknownCite)
	HeaderUncited     = http.CanonicalHeaderKey(chat.HeaderUncited)
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

// appendSufficiency writes the sufficient-context gateway's response object:
// {"score": confidence, "level": ..., "factors": [...]}.
func appendSufficiency(dst []byte, d *decisionView) []byte {
	dst = append(dst, `{"score":`...)
	dst = append(dst, d.confidenceRaw()...)
	dst = append(dst, `,"level":`...)
	dst = jsonx.AppendString(dst, d.Level)
	dst = append(dst, `,"factors":`...)
	dst = append(dst, '[')
	for i, f := range d.ConfidenceFactors {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendString(dst, f)
	}
	return append(dst, "]}"...)
}
