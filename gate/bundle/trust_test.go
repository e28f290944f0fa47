package bundle_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/host/signing"
)

func TestParseTrust(t *testing.T) {
	ed, ml := key(t, bundle.Ed25519, "ed-a"), key(t, bundle.MLDSA65, "ml-a")
	set := string(signing.MarshalPublicKeys(pubs(ed, ml)))
	one := strings.TrimSuffix(strings.Split(set, "\n")[1], ",")
	for name, doc := range map[string]string{
		"key set":    set,
		"single key": one,
		"array":      "[" + one + "]",
	} {
		keys, err := bundle.ParseTrust([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if keys[0].ID != ed.ID || keys[0].Alg != bundle.Ed25519 {
			t.Errorf("%s: first key %s/%s, want ed25519/%s", name, keys[0].Alg, keys[0].ID, ed.ID)
		}
	}
	edPub := base64.StdEncoding.EncodeToString(ed.Public().Raw)
	cases := []struct{ name, doc, field, msg string }{
		{"empty set", `{"keys":[]}`, "trust_keys.keys", "no keys"},
		{"number", `7`, "trust_keys", "must be a key, a key array"},
		{"extra set member", `{"keys":[` + one + `],"x":1}`, "trust_keys.x", "unknown key set member"},
		{"private key", `{"alg":"ed25519","key_id":"` + ed.ID + `","public":"` + edPub + `","private":"AAAA"}`, "trust_keys.private", "must not hold a private key"},
		{"wrong id", `{"alg":"ed25519","key_id":"0000000000000000","public":"` + edPub + `"}`, "trust_keys.key_id", "does not match the key (its id is " + ed.ID + ")"},
		{"alg swapped", `{"alg":"ml-dsa-65","key_id":"` + ed.ID + `","public":"` + edPub + `"}`, "trust_keys.public", "ml-dsa-65 key must be 1952 bytes, got 32"},
		{"unknown alg", `{"alg":"rsa","key_id":"x","public":"` + edPub + `"}`, "trust_keys.alg", "unknown signature algorithm"},
		{"missing id", `{"alg":"ed25519","public":"` + edPub + `"}`, "trust_keys.key_id", "missing"},
		{"second key bad", `{"keys":[` + one + `,{"alg":"ed25519"}]}`, "trust_keys.keys[1].key_id", "missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := bundle.ParseTrust([]byte(c.doc))
			wantPolicyError(t, err, c.field, c.msg)
		})
	}
}

func TestKeyID(t *testing.T) {
	ed := key(t, bundle.Ed25519, "ed-a")
	if len(ed.ID) != 16 || bundle.KeyID(bundle.Ed25519, ed.Public().Raw) != ed.ID {
		t.Fatalf("key id %q", ed.ID)
	}
	if bundle.KeyID(bundle.MLDSA65, ed.Public().Raw) == ed.ID {
		t.Fatal("the key id does not depend on the algorithm")
	}
}
