// Package cases holds guest test inputs shared by the native plugin tests
// and the module tests, so both builds are checked on the same cases.
package cases

import (
	"bytes"
	"testing"

	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/host/signing"
	"github.com/ctxgate/ctxgate/policies"
)

// Case is an Extism config and what loading it must give.
type Case struct {
	Name   string
	Config map[string]string
	// Field is the error field (prefix) of the expected bad_policy error;
	// "" when the engine must load. Policy is the loaded policy's name then
	// ("" for the built-in default).
	Field  string
	Policy string
}

// keyPair makes fixed-seed hybrid keys (Ed25519 + ML-DSA-65); base 0 gives
// gate/bundle's test-vector keys, another base a pair nobody trusts.
func keyPair(tb testing.TB, base byte) []*signing.PrivateKey {
	tb.Helper()
	var out []*signing.PrivateKey
	for i, alg := range []bundle.Alg{bundle.Ed25519, bundle.MLDSA65} {
		seed := make([]byte, 32)
		for j := range seed {
			seed[j] = base + byte(32*i+j)
		}
		k, err := signing.NewKeyFromSeed(alg, seed)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, k)
	}
	return out
}

func trustJSON(keys []*signing.PrivateKey) string {
	var pubs []bundle.PublicKey
	for _, k := range keys {
		pubs = append(pubs, k.Public())
	}
	return string(signing.MarshalPublicKeys(pubs))
}

// Signed returns the signed-policy configs every build of the guest must
// treat alike (natively and in both modules).
func Signed(tb testing.TB) []Case {
	tb.Helper()
	keys, other := keyPair(tb, 0), keyPair(tb, 0x80)
	policy, _ := policies.Get("wikigr")
	signed, err := signing.Sign(policy, keys...)
	if err != nil {
		tb.Fatal(err)
	}
	edOnly, err := signing.Sign(policy, keys[0])
	if err != nil {
		tb.Fatal(err)
	}
	mlOnly, err := signing.Sign(policy, keys[1])
	if err != nil {
		tb.Fatal(err)
	}
	edKey, mlKey := trustJSON(keys[:1]), trustJSON(keys[1:])
	tampered := bytes.Replace(signed, []byte(`"wikigr"`), []byte(`"wikigR"`), 1)
	if bytes.Equal(tampered, signed) {
		tb.Fatal("tampering changed nothing: the policy name moved")
	}
	return []Case{
		{"signed", map[string]string{"policy": string(signed), "trust_keys": trustJSON(keys)}, "", "wikigr"},
		{"default_with_trust", map[string]string{"trust_keys": trustJSON(keys)}, "policy", ""},
		{"tampered", map[string]string{"policy": string(tampered), "trust_keys": trustJSON(keys)}, "signatures", ""},
		{"untrusted_signer", map[string]string{"policy": string(signed), "trust_keys": trustJSON(other)}, "signatures", ""},
		{"one_signature_in_hybrid", map[string]string{"policy": string(edOnly), "trust_keys": trustJSON(keys)}, "signatures", ""},
		{"unsigned_with_trust", map[string]string{"policy": string(policy), "trust_keys": trustJSON(keys)}, "policy", ""},
		{"bundle_without_trust", map[string]string{"policy": string(signed)}, "trust_keys", ""},
		{"bad_trust", map[string]string{"policy": string(signed), "trust_keys": `{"keys":[]}`}, "trust_keys.keys", ""},

		// trust_mode: single-scheme keys open what they sign, and a bundle
		// signed in one scheme never opens under keys or a mode of another.
		{"ed25519_only_keys_hybrid_mode", map[string]string{"policy": string(edOnly), "trust_keys": edKey}, "signatures", ""},
		{"ed25519_mode", map[string]string{"policy": string(edOnly), "trust_keys": edKey, "trust_mode": "ed25519"}, "", "wikigr"},
		{"ed25519_mode_hybrid_bundle", map[string]string{"policy": string(signed), "trust_keys": edKey, "trust_mode": "ed25519"}, "", "wikigr"},
		{"ed25519_mode_ml_dsa_bundle", map[string]string{"policy": string(mlOnly), "trust_keys": trustJSON(keys), "trust_mode": "ed25519"}, "signatures", ""},
		{"ed25519_mode_ml_dsa_keys", map[string]string{"policy": string(signed), "trust_keys": mlKey, "trust_mode": "ed25519"}, "signatures", ""},
		{"ed25519_mode_tampered", map[string]string{"policy": string(tampered), "trust_keys": edKey, "trust_mode": "ed25519"}, "signatures", ""},
		{"ed25519_mode_untrusted_signer", map[string]string{"policy": string(signed), "trust_keys": trustJSON(other), "trust_mode": "ed25519"}, "signatures", ""},
		{"ml_dsa_mode", map[string]string{"policy": string(mlOnly), "trust_keys": mlKey, "trust_mode": "ml-dsa-65"}, "", "wikigr"},
		{"ml_dsa_alias", map[string]string{"policy": string(signed), "trust_keys": mlKey, "trust_mode": "ml-dsa"}, "", "wikigr"},
		{"ml_dsa_mode_ed25519_bundle", map[string]string{"policy": string(edOnly), "trust_keys": trustJSON(keys), "trust_mode": "ml-dsa-65"}, "signatures", ""},
		{"hybrid_mode_named", map[string]string{"policy": string(edOnly), "trust_keys": trustJSON(keys), "trust_mode": "hybrid"}, "signatures", ""},
		{"unknown_mode", map[string]string{"policy": string(signed), "trust_keys": trustJSON(keys), "trust_mode": "rsa"}, "trust_mode", ""},
		{"mode_without_trust", map[string]string{"policy": string(policy), "trust_mode": "ed25519"}, "trust_mode", ""},
	}
}
