package bundle_test

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/host/signing"
)

// key derives a fixed key from a name, so tests and vectors never depend on
// a random source.
func key(t testing.TB, alg bundle.Alg, name string) *signing.PrivateKey {
	t.Helper()
	seed := sha256.Sum256([]byte("ctxgate test key " + name))
	k, err := signing.NewKeyFromSeed(alg, seed[:])
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func pubs(keys ...*signing.PrivateKey) []bundle.PublicKey {
	out := make([]bundle.PublicKey, len(keys))
	for i, k := range keys {
		out[i] = k.Public()
	}
	return out
}

func sign(t testing.TB, policy string, keys ...*signing.PrivateKey) []byte {
	t.Helper()
	b, err := signing.Sign([]byte(policy), keys...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantPolicyError checks err is a bad_policy *gate.Error whose field and
// message contain the given parts.
func wantPolicyError(t testing.TB, err error, field, msgPart string) {
	t.Helper()
	var ge *gate.Error
	if !errors.As(err, &ge) {
		t.Fatalf("want *gate.Error (field %q, message ~ %q), got %T %v", field, msgPart, err, err)
	}
	if ge.Code != gate.CodeBadPolicy {
		t.Errorf("code = %q, want bad_policy (%v)", ge.Code, ge)
	}
	if ge.Field != field {
		t.Errorf("field = %q, want %q (%v)", ge.Field, field, ge)
	}
	if !strings.Contains(ge.Message, msgPart) {
		t.Errorf("message = %q, want it to contain %q", ge.Message, msgPart)
	}
}

const testPolicy = `{
  "version": "1.2.0", "name": "test",
  "thresholds": {"inject": 0.72, "fallback": 0.35, "refuse": 0.1},
  "refusal_message": "I don't know <that> \u00e9",
  "weights": [1, 0.5, 2e-3]
}`

func errField(err error) string {
	var ge *gate.Error
	if errors.As(err, &ge) {
		return ge.Field
	}
	return ""
}
