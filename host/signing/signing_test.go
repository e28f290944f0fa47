package signing

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/bundle"
)

func testKey(t *testing.T, alg bundle.Alg, name string) *PrivateKey {
	t.Helper()
	seed := sha256.Sum256([]byte("ctxgate test key " + name))
	k, err := NewKeyFromSeed(alg, seed[:])
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestGenerateKeyUsesRand(t *testing.T) {
	seed := bytes.Repeat([]byte{7}, 32)
	for _, alg := range Algs {
		k, err := GenerateKey(alg, bytes.NewReader(seed))
		if err != nil {
			t.Fatal(err)
		}
		k2, _ := NewKeyFromSeed(alg, seed)
		if k.ID != k2.ID || !bytes.Equal(k.Public().Raw, k2.Public().Raw) {
			t.Errorf("%s: GenerateKey and NewKeyFromSeed disagree", alg)
		}
		if _, err := GenerateKey(alg, bytes.NewReader(seed[:10])); err == nil {
			t.Errorf("%s: a short random stream gave a key", alg)
		}
	}
	if _, err := NewKeyFromSeed("rsa", seed); err == nil {
		t.Error("unknown algorithm accepted")
	}
}

func TestKeyFileRoundTrip(t *testing.T) {
	keys := []*PrivateKey{testKey(t, bundle.Ed25519, "a"), testKey(t, bundle.MLDSA65, "b")}
	dir := t.TempDir()
	sec, pub := filepath.Join(dir, "k.key"), filepath.Join(dir, "k.pub")
	if err := WriteKeyFile(sec, MarshalPrivateKeys(keys), true); err != nil {
		t.Fatal(err)
	}
	if err := WriteKeyFile(pub, MarshalPublicKeys([]bundle.PublicKey{keys[0].Public(), keys[1].Public()}), false); err != nil {
		t.Fatal(err)
	}
	if err := WriteKeyFile(sec, []byte("x"), true); err == nil {
		t.Error("WriteKeyFile overwrote an existing key file")
	}
	if st, _ := os.Stat(sec); st.Mode().Perm() != 0o600 {
		t.Errorf("secret key file mode %v, want 0600", st.Mode().Perm())
	}
	got, err := ReadPrivateKeys(sec)
	if err != nil {
		t.Fatal(err)
	}
	trust, err := ReadTrust(pub, pub) // a repeated file adds nothing
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(trust) != 2 {
		t.Fatalf("read %d keys and %d trust keys, want 2 and 2", len(got), len(trust))
	}
	for i := range keys {
		if got[i].ID != keys[i].ID || !bytes.Equal(got[i].Seed, keys[i].Seed) || trust[i].ID != keys[i].ID {
			t.Errorf("key %d did not round-trip", i)
		}
	}
	b, err := Sign([]byte(`{"name":"p"}`), got...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Open(b, trust, bundle.Hybrid); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPrivateKeys(pub); err == nil || !strings.Contains(err.Error(), "has no private key") {
		t.Errorf("a trust file read as a secret key file: %v", err)
	}
}

func TestParsePrivateKeysRejects(t *testing.T) {
	k := testKey(t, bundle.Ed25519, "a")
	other := testKey(t, bundle.Ed25519, "b")
	good := string(MarshalPrivateKeys([]*PrivateKey{k}))
	single := strings.TrimSpace(strings.Split(good, "\n")[1])
	for name, doc := range map[string]string{
		"wrong id":     strings.Replace(good, k.ID, other.ID, 1),
		"wrong public": strings.Replace(good, b64(k.Public().Raw), b64(other.Public().Raw), 1),
		"extra member": strings.Replace(good, `{"alg"`, `{"x":1,"alg"`, 1),
		"empty set":    `{"keys":[]}`,
		"not json":     `{`,
		"short seed":   strings.Replace(good, b64(k.Seed), "AAAA", 1),
		"unknown alg":  strings.Replace(good, `"ed25519"`, `"rsa"`, 1),
	} {
		if _, err := ParsePrivateKeys([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if keys, err := ParsePrivateKeys([]byte(single)); err != nil || keys[0].ID != k.ID {
		t.Errorf("single key object: %v", err)
	}
}

func TestReceipt(t *testing.T) {
	ed, ml := testKey(t, bundle.Ed25519, "a"), testKey(t, bundle.MLDSA65, "b")
	trust := []bundle.PublicKey{ed.Public(), ml.Public()}
	req, dec := []byte(`{"query":"q"}`), []byte(`{"action":"inject"}`)
	pol := strings.Repeat("ab", 32)
	when := time.Date(2026, 3, 1, 12, 30, 0, 500, time.FixedZone("x", 3600))
	r, err := SignReceipt(req, dec, pol, when, ed, ml)
	if err != nil {
		t.Fatal(err)
	}
	got, err := VerifyReceipt(r, trust, bundle.Hybrid)
	if err != nil {
		t.Fatal(err)
	}
	if got.Time != "2026-03-01T11:30:00.0000005Z" || got.PolicySHA256 != pol {
		t.Errorf("receipt fields: %+v", got)
	}
	if err := got.Matches(req, dec); err != nil {
		t.Error(err)
	}
	if err := got.Matches([]byte(`{"query":"Q"}`), nil); err == nil {
		t.Error("a different request matches the receipt")
	}
	if err := got.Matches(nil, []byte(`{"action":"refuse"}`)); err == nil {
		t.Error("a different decision matches the receipt")
	}

	// Tampering with any signed field, or with either signature, or moving
	// a signature to another key id, is rejected.
	s := string(r)
	tampered := map[string]string{
		"request hash":             strings.Replace(s, got.RequestSHA256, sha(`{"query":"x"}`), 1),
		"decision hash":            strings.Replace(s, got.DecisionSHA256, sha(`{"action":"refuse"}`), 1),
		"policy hash":              strings.Replace(s, pol, strings.Repeat("cd", 32), 1),
		"time":                     strings.Replace(s, "11:30:00", "11:31:00", 1),
		"ed25519 sig":              flipSig(s, 0),
		"ml-dsa-65 sig":            flipSig(s, 1),
		"dropped ml-dsa signature": s[:strings.Index(s, `,{"alg":"ml-dsa-65"`)] + "]}",
	}
	for name, doc := range tampered {
		if doc == s {
			t.Fatalf("%s: tampering did not change the receipt", name)
		}
		_, err := VerifyReceipt([]byte(doc), trust, bundle.Hybrid)
		var ge *gate.Error
		if !errors.As(err, &ge) || ge.Code != gate.CodeBadField {
			t.Errorf("%s: want a bad_field error, got %v", name, err)
		}
	}
	_, err = VerifyReceipt(r, []bundle.PublicKey{testKey(t, bundle.Ed25519, "z").Public(), ml.Public()}, bundle.Hybrid)
	if err == nil || !strings.Contains(err.Error(), "unknown ed25519 key "+ed.ID) {
		t.Errorf("untrusted key: %v", err)
	}
	if _, err := SignReceipt(req, dec, "nothex", when, ed); err == nil {
		t.Error("a malformed policy hash was signed")
	}
}

func TestReceiptAndBundleDomainsDiffer(t *testing.T) {
	r := &Receipt{}
	if bytes.HasPrefix(r.Message("x"), []byte(bundle.PolicyDomain)) || ReceiptDomain == bundle.PolicyDomain {
		t.Fatal("receipt and policy messages share a domain")
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func sha(s string) string { return sum([]byte(s)) }

// flipSig changes one character in the middle of the n-th signature.
func flipSig(s string, n int) string {
	i := 0
	for ; n >= 0; n-- {
		i += strings.Index(s[i:], `"sig":"`) + len(`"sig":"`)
	}
	i += 20
	c := s[i] ^ 0x01
	return s[:i] + string(c) + s[i+1:]
}
