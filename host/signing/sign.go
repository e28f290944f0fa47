package signing

import (
	"encoding/base64"
	"errors"
	"strconv"

	"github.com/ctxgate/ctxgate/gate/bundle"
)

// Sign wraps a policy in a bundle signed by every key given (one Ed25519 and
// one ML-DSA-65 key for the default hybrid mode; add the next keys too
// during a rotation). The policy is stored in canonical form, so the bundle
// bytes depend only on the policy's content and the keys.
func Sign(policyJSON []byte, keys ...*PrivateKey) ([]byte, error) {
	if len(keys) == 0 {
		return nil, errors.New("signing: no signing keys")
	}
	if len(keys) > bundle.MaxSignatures {
		return nil, errors.New("signing: at most " + strconv.Itoa(bundle.MaxSignatures) + " signatures per bundle")
	}
	canon, err := bundle.Canonical(policyJSON)
	if err != nil {
		return nil, err
	}
	msg := bundle.Message(canon)
	out := []byte(`{"ctxgate_bundle":1,"policy":`)
	out = append(out, canon...)
	out = append(out, `,"signatures":`...)
	out = appendSignatures(out, keys, func(*PrivateKey) []byte { return msg })
	return append(out, "}\n"...), nil
}

// appendSignatures writes the "signatures" array: one entry per key, over
// the message message(key) returns.
func appendSignatures(out []byte, keys []*PrivateKey, message func(*PrivateKey) []byte) []byte {
	out = append(out, '[')
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"alg":"`...)
		out = append(out, k.Alg...)
		out = append(out, `","key_id":"`...)
		out = append(out, k.ID...)
		out = append(out, `","sig":"`...)
		out = base64.StdEncoding.AppendEncode(out, k.sign(message(k)))
		out = append(out, `"}`...)
	}
	return append(out, ']')
}
