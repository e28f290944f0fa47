// Package bundle opens signed policy bundles: it checks Ed25519 and
// ML-DSA-65 signatures over a policy's canonical bytes against trusted keys.
// It is pure and TinyGo-safe (no I/O, no clock, no fmt, no encoding/json), so
// the Wasm guests verify a bundle inside the sandbox at configure time. The
// format is specified in docs/signing.md so that other languages can verify.
package bundle

import (
	"encoding/base64"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

const (
	// FormatVersion is the value of a bundle's "ctxgate_bundle" member.
	FormatVersion = 1
	// PolicyDomain prefixes the canonical policy in the signed message, so a
	// policy signature can never be replayed as a receipt signature (or as
	// anything else signed by the same key).
	PolicyDomain = "ctxgate-policy-v1\n"
)

// Bundle is a parsed, not yet verified, bundle.
type Bundle struct {
	// Policy is the canonical encoding of the bundle's policy object: the
	// exact bytes the signatures cover, after PolicyDomain.
	Policy     []byte
	Signatures []Signature
	message    []byte // PolicyDomain || Policy; Policy aliases its tail
}

// Options configures OpenWith.
type Options struct {
	Trust []PublicKey
	Mode  Mode
	// MinVersion, when set, refuses a policy whose "version" sorts before it
	// (CompareVersions). A host that passes the version it runs now makes
	// reloads monotonic: an older, validly signed policy cannot be replayed.
	MinVersion string
}

// Open verifies a bundle against the trust keys under mode and returns the
// canonical policy JSON it carries. Hand exactly these bytes to
// gate.NewEngine: they are what was signed, so no second parser can read the
// document differently. Every error is a *gate.Error with code bad_policy.
func Open(bundleJSON []byte, trust []PublicKey, mode Mode) ([]byte, error) {
	return OpenWith(bundleJSON, Options{Trust: trust, Mode: mode})
}

// OpenWith is Open with options (version pinning).
func OpenWith(bundleJSON []byte, o Options) ([]byte, error) {
	if len(o.Trust) == 0 {
		return nil, bad("trust_keys", "no trust keys configured")
	}
	b, err := Parse(bundleJSON)
	if err != nil {
		return nil, err
	}
	return b.open(o)
}

// OpenValue is OpenWith for a bundle embedded as an object in a larger JSON
// document (an Envoy filter's configuration): the bytes as signed are gone,
// so the bundle's own encoding is not checked, only its content: the
// signatures still cover every byte of the canonical policy. A bundle whose
// numbers were rewritten on the way (a YAML or protobuf Struct round trip
// turns 0.50 into 0.5) does not verify; carry bundles as strings to be safe.
func OpenValue(v *jsonx.Value, o Options) ([]byte, error) {
	if len(o.Trust) == 0 {
		return nil, bad("trust_keys", "no trust keys configured")
	}
	b, err := parseValue(v, nil)
	if err != nil {
		return nil, err
	}
	return b.open(o)
}

func (b *Bundle) open(o Options) ([]byte, error) {
	msg := b.message
	if err := VerifySignatures(b.Signatures, o.Trust, o.Mode, func(int) []byte { return msg }, "signatures"); err != nil {
		return nil, err
	}
	if o.MinVersion != "" {
		if err := checkVersion(b.Policy, o.MinVersion); err != nil {
			return nil, err
		}
	}
	return b.Policy, nil
}

// IsBundle reports whether data looks like a bundle (a JSON object with a
// "ctxgate_bundle" member) rather than a plain policy. Guests use it to refuse
// a bundle when no trust keys are configured instead of misreading it as a
// policy.
func IsBundle(data []byte) bool {
	v, err := parse(data)
	return err == nil && v.Kind() == jsonx.Object && v.Get("ctxgate_bundle") != nil
}

// Message returns the bytes a bundle's signatures sign for a policy given
// in canonical form: PolicyDomain || canonicalPolicy.
func Message(canonicalPolicy []byte) []byte {
	m := make([]byte, 0, len(PolicyDomain)+len(canonicalPolicy))
	return append(append(m, PolicyDomain...), canonicalPolicy...)
}

// Canonical parses a policy document and returns its canonical encoding
// (docs/signing.md): the signer signs Message(Canonical(policy)).
func Canonical(policyJSON []byte) ([]byte, error) {
	v, err := parse(policyJSON)
	if err != nil {
		return nil, bad("policy", "policy is not valid JSON: "+err.Error())
	}
	if v.Kind() != jsonx.Object {
		return nil, bad("policy", "policy must be an object, got "+v.Kind().String())
	}
	return jsonx.AppendCanonical(nil, v), nil
}

// Parse reads a bundle without verifying it (for tools that show what a
// bundle holds). Unknown members are refused: nothing unsigned may ride along
// looking as if it mattered.
func Parse(bundleJSON []byte) (*Bundle, error) {
	v, err := parse(bundleJSON)
	if err != nil {
		return nil, bad("", "bundle is not valid JSON: "+err.Error())
	}
	return parseValue(v, bundleJSON)
}

// parseValue reads a parsed bundle; raw, when not nil, is the document it
// was parsed from, which must then be in canonical form.
func parseValue(v *jsonx.Value, raw []byte) (*Bundle, error) {
	if v.Kind() != jsonx.Object {
		return nil, bad("", "bundle must be a JSON object, got "+v.Kind().String())
	}
	ver := v.Get("ctxgate_bundle")
	if ver == nil {
		return nil, bad("", "policy is not signed (trust keys are configured: only a signed bundle is accepted)")
	}
	if ver.Kind() != jsonx.Number || ver.Raw() != "1" {
		return nil, bad("ctxgate_bundle", "unsupported bundle version "+describe(ver)+" (this build reads 1)")
	}
	for i := 0; i < v.Len(); i++ {
		switch v.Key(i) {
		case "ctxgate_bundle", "policy", "signatures":
		default:
			return nil, bad(v.Key(i), "unknown bundle member")
		}
	}
	pol := v.Get("policy")
	if pol.Kind() != jsonx.Object {
		return nil, bad("policy", "must be an object, got "+pol.Kind().String())
	}
	// A bundle has exactly one encoding: the canonical one its signer wrote.
	// Anything else (reformatted, keys reordered, escapes rewritten) is
	// refused, so a changed byte anywhere fails, and a bundle's sha256
	// identifies it.
	if raw != nil && !sameIgnoringOuterSpace(raw, jsonx.AppendCanonical(make([]byte, 0, len(raw)), v)) {
		return nil, bad("", "bundle is not in canonical form (was it reformatted? sign the policy again)")
	}
	b := &Bundle{}
	b.message = jsonx.AppendCanonical(append(make([]byte, 0, 512), PolicyDomain...), pol)
	b.Policy = b.message[len(PolicyDomain):]
	sigs, err := ParseSignatures(v.Get("signatures"), "signatures")
	if err != nil {
		return nil, err
	}
	b.Signatures = sigs
	return b, nil
}

// ParseSignatures reads a "signatures" array: objects with exactly "alg",
// "key_id" and "sig" (standard base64 with padding, strict).
func ParseSignatures(v *jsonx.Value, field string) ([]Signature, error) {
	if v.Kind() != jsonx.Array {
		return nil, bad(field, "must be an array of signatures, got "+v.Kind().String())
	}
	if v.Len() == 0 {
		return nil, bad(field, "no signatures")
	}
	if v.Len() > MaxSignatures {
		return nil, bad(field, "too many signatures: "+itoa(v.Len())+" (max "+itoa(MaxSignatures)+")")
	}
	out := make([]Signature, v.Len())
	for i := range out {
		f := index(field, i)
		s := v.Index(i)
		if s.Kind() != jsonx.Object {
			return nil, bad(f, "must be an object, got "+s.Kind().String())
		}
		for j := 0; j < s.Len(); j++ {
			switch s.Key(j) {
			case "alg", "key_id", "sig":
			default:
				return nil, bad(f+"."+s.Key(j), "unknown signature member")
			}
		}
		alg, err := str(s, "alg", f)
		if err != nil {
			return nil, err
		}
		id, err := str(s, "key_id", f)
		if err != nil {
			return nil, err
		}
		sig, err := b64(s, "sig", f)
		if err != nil {
			return nil, err
		}
		out[i] = Signature{Alg: Alg(alg), KeyID: id, Sig: sig}
		if out[i].Alg != Ed25519 && out[i].Alg != MLDSA65 {
			return nil, unknownAlg(f+".alg", out[i].Alg)
		}
	}
	return out, nil
}

func str(obj *jsonx.Value, key, field string) (string, error) {
	m := obj.Get(key)
	if m.Kind() != jsonx.String {
		if m == nil {
			return "", bad(field+"."+key, "missing")
		}
		return "", bad(field+"."+key, "must be a string, got "+m.Kind().String())
	}
	return m.Str(), nil
}

// Strict decoding refuses non-zero padding bits, so every signature has one
// encoding and a flipped character can never decode to the same bytes.
var std = base64.StdEncoding.Strict()

func b64(obj *jsonx.Value, key, field string) ([]byte, error) {
	s, err := str(obj, key, field)
	if err != nil {
		return nil, err
	}
	out, derr := std.DecodeString(s)
	if derr != nil {
		return nil, bad(field+"."+key, "not valid base64 (standard alphabet, padded)")
	}
	return out, nil
}

func describe(v *jsonx.Value) string {
	switch v.Kind() {
	case jsonx.Number:
		return v.Raw()
	case jsonx.String:
		return "\"" + v.Str() + "\""
	}
	return v.Kind().String()
}

func sameIgnoringOuterSpace(doc, canon []byte) bool {
	i, j := 0, len(doc)
	for i < j && isSpace(doc[i]) {
		i++
	}
	for j > i && isSpace(doc[j-1]) {
		j--
	}
	return string(doc[i:j]) == string(canon)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
