package signing

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// ReceiptDomain starts every receipt message (docs/signing.md), keeping
// receipt signatures and policy signatures apart even under one key.
const ReceiptDomain = "ctxgate-receipt-v1\n"

// Receipt says which policy decided what, when: an auditor holding the
// request and decision bytes can prove this gate run produced them.
type Receipt struct {
	RequestSHA256  string // hex sha256 of the request bytes as received
	DecisionSHA256 string // hex sha256 of the decision bytes as returned
	PolicySHA256   string // the decision's policy.sha256 (canonical policy bytes)
	Time           string // RFC 3339, from the host's clock
	Signatures     []bundle.Signature
}

// Message returns the bytes the signature by keyID signs: the domain line,
// then one "name=value" line per field, then the key id, so a signature
// cannot be moved to another key's slot.
func (r *Receipt) Message(keyID string) []byte {
	m := make([]byte, 0, 320)
	m = append(m, ReceiptDomain...)
	m = appendLine(m, "request_sha256", r.RequestSHA256)
	m = appendLine(m, "decision_sha256", r.DecisionSHA256)
	m = appendLine(m, "policy_sha256", r.PolicySHA256)
	m = appendLine(m, "time", r.Time)
	return appendLine(m, "key_id", keyID)
}

func appendLine(m []byte, name, value string) []byte {
	m = append(m, name...)
	m = append(m, '=')
	m = append(m, value...)
	return append(m, '\n')
}

// SignReceipt signs a receipt for one evaluation. request and decision are
// the exact bytes the host received and handed out (ctxgate eval: the
// decision JSON and the newline it writes after it), so an auditor's copy
// of them hashes to the receipt. policySHA256 is the decision's
// policy.sha256; t is the host's clock, written in UTC with nanoseconds
// (RFC 3339).
func SignReceipt(request, decision []byte, policySHA256 string, t time.Time, keys ...*PrivateKey) ([]byte, error) {
	if len(keys) == 0 {
		return nil, errors.New("signing: no signing keys")
	}
	r := &Receipt{
		RequestSHA256:  sum(request),
		DecisionSHA256: sum(decision),
		PolicySHA256:   policySHA256,
		Time:           t.UTC().Format(time.RFC3339Nano),
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	out := []byte(`{"ctxgate_receipt":1,"request_sha256":"`)
	out = append(out, r.RequestSHA256...)
	out = append(out, `","decision_sha256":"`...)
	out = append(out, r.DecisionSHA256...)
	out = append(out, `","policy_sha256":"`...)
	out = append(out, r.PolicySHA256...)
	out = append(out, `","time":"`...)
	out = append(out, r.Time...)
	out = append(out, `","signatures":`...)
	out = appendSignatures(out, keys, func(k *PrivateKey) []byte { return r.Message(k.ID) })
	return append(out, "}\n"...), nil
}

// VerifyReceipt parses a receipt and checks its signatures under mode with
// the rules of bundle.VerifySignatures. Errors are *gate.Error naming the
// field. It does not compare the hashes with any request or decision: use
// Receipt.Matches for that.
func VerifyReceipt(receiptJSON []byte, trust []bundle.PublicKey, mode bundle.Mode) (*Receipt, error) {
	r, err := ParseReceipt(receiptJSON)
	if err != nil {
		return nil, err
	}
	if err := bundle.VerifySignatures(r.Signatures, trust, mode, func(i int) []byte {
		return r.Message(r.Signatures[i].KeyID)
	}, "signatures"); err != nil {
		return nil, asFieldError(err)
	}
	return r, nil
}

// ParseReceipt reads a receipt without verifying its signatures.
func ParseReceipt(receiptJSON []byte) (*Receipt, error) {
	v, err := jsonx.Parse(receiptJSON, 8)
	if err != nil {
		return nil, bad("", "receipt is not valid JSON: "+err.Error())
	}
	if v.Kind() != jsonx.Object {
		return nil, bad("", "receipt must be a JSON object")
	}
	if ver := v.Get("ctxgate_receipt"); ver.Kind() != jsonx.Number || ver.Raw() != "1" {
		return nil, bad("ctxgate_receipt", "not a version 1 receipt")
	}
	r := &Receipt{}
	fields := []struct {
		name string
		dst  *string
	}{{"request_sha256", &r.RequestSHA256}, {"decision_sha256", &r.DecisionSHA256}, {"policy_sha256", &r.PolicySHA256}, {"time", &r.Time}}
	for i := 0; i < v.Len(); i++ {
		switch v.Key(i) {
		case "ctxgate_receipt", "signatures", "request_sha256", "decision_sha256", "policy_sha256", "time":
		default:
			return nil, bad(v.Key(i), "unknown receipt member")
		}
	}
	for _, f := range fields {
		m := v.Get(f.name)
		if m.Kind() != jsonx.String {
			return nil, bad(f.name, "missing or not a string")
		}
		*f.dst = m.Str()
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	sigs, err := bundle.ParseSignatures(v.Get("signatures"), "signatures")
	if err != nil {
		return nil, asFieldError(err)
	}
	r.Signatures = sigs
	return r, nil
}

// check keeps every field to a form that cannot contain the line separator
// of Message, so the message encoding is unambiguous.
func (r *Receipt) check() error {
	for _, f := range []struct{ name, v string }{{"request_sha256", r.RequestSHA256}, {"decision_sha256", r.DecisionSHA256}, {"policy_sha256", r.PolicySHA256}} {
		if !isHex64(f.v) {
			return bad(f.name, "must be 64 lower-case hex characters")
		}
	}
	if _, err := time.Parse(time.RFC3339Nano, r.Time); err != nil {
		return bad("time", "not an RFC 3339 time: "+strconv.Quote(r.Time))
	}
	return nil
}

// Matches reports whether the receipt covers exactly these request and
// decision bytes (nil skips a check).
func (r *Receipt) Matches(request, decision []byte) error {
	if request != nil && sum(request) != r.RequestSHA256 {
		return bad("request_sha256", "the request does not match the receipt")
	}
	if decision != nil && sum(decision) != r.DecisionSHA256 {
		return bad("decision_sha256", "the decision does not match the receipt")
	}
	return nil
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Receipt errors are bad_field errors: a receipt is an input to check, not
// a policy.
func bad(field, msg string) *gate.Error {
	return &gate.Error{Code: gate.CodeBadField, Field: field, Message: msg}
}

// asFieldError recodes gate/bundle's bad_policy errors for a receipt.
func asFieldError(err error) error {
	if ge, ok := err.(*gate.Error); ok {
		return bad(ge.Field, ge.Message)
	}
	return err
}
