package bundle_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/host/signing"
)

func TestRoundTrip(t *testing.T) {
	ed := key(t, bundle.Ed25519, "ed-a")
	ml := key(t, bundle.MLDSA65, "ml-a")
	canon, err := bundle.Canonical([]byte(testPolicy))
	if err != nil {
		t.Fatal(err)
	}
	const wantCanon = `{"name":"test","refusal_message":"I don't know \u003cthat\u003e é","thresholds":{"fallback":0.35,"inject":0.72,"refuse":0.1},"version":"1.2.0","weights":[1,0.5,2e-3]}`
	if string(canon) != wantCanon {
		t.Fatalf("canonical policy\n got %s\nwant %s", canon, wantCanon)
	}
	cases := []struct {
		name    string
		signers []*signing.PrivateKey
		mode    bundle.Mode
		err     string // "" when the bundle must open
	}{
		{"hybrid", []*signing.PrivateKey{ed, ml}, bundle.Hybrid, ""},
		{"hybrid signers reversed", []*signing.PrivateKey{ml, ed}, bundle.Hybrid, ""},
		{"ed25519 only", []*signing.PrivateKey{ed}, bundle.Ed25519Only, ""},
		{"ml-dsa-65 only", []*signing.PrivateKey{ml}, bundle.MLDSA65Only, ""},
		{"hybrid bundle, ed25519 mode", []*signing.PrivateKey{ed, ml}, bundle.Ed25519Only, ""},
		{"hybrid bundle, ml-dsa-65 mode", []*signing.PrivateKey{ed, ml}, bundle.MLDSA65Only, ""},
		{"ed25519 bundle, hybrid mode", []*signing.PrivateKey{ed}, bundle.Hybrid, "no ml-dsa-65 signature (mode hybrid requires one)"},
		{"ml-dsa-65 bundle, hybrid mode", []*signing.PrivateKey{ml}, bundle.Hybrid, "no ed25519 signature (mode hybrid requires one)"},
		{"ed25519 bundle, ml-dsa-65 mode", []*signing.PrivateKey{ed}, bundle.MLDSA65Only, "no ml-dsa-65 signature"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := sign(t, testPolicy, c.signers...)
			got, err := bundle.Open(b, pubs(ed, ml), c.mode)
			if c.err != "" {
				wantPolicyError(t, err, "signatures", c.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, canon) {
				t.Fatalf("opened policy\n got %s\nwant %s", got, canon)
			}
		})
	}
}

// Signing is deterministic (Ed25519 always, ML-DSA-65 in its deterministic
// variant), and signing a reformatted policy gives the same bundle.
func TestSignDeterministic(t *testing.T) {
	keys := []*signing.PrivateKey{key(t, bundle.Ed25519, "ed-a"), key(t, bundle.MLDSA65, "ml-a")}
	a := sign(t, testPolicy, keys...)
	canon, _ := bundle.Canonical([]byte(testPolicy))
	b := sign(t, string(canon), keys...)
	if !bytes.Equal(a, b) {
		t.Fatal("the same policy, reformatted, signed to different bundles")
	}
}

// Every byte of a hybrid bundle (framing, policy, both signatures) is
// flipped in turn, with three masks (low bit, ASCII case, high bit): no
// variant may open. The bundle's single canonical encoding makes this hold
// literally, not just for bytes the signatures cover.
func TestFlippedByteRejected(t *testing.T) {
	ed := key(t, bundle.Ed25519, "ed-a")
	ml := key(t, bundle.MLDSA65, "ml-a")
	b := sign(t, testPolicy, ed, ml)
	trust := pubs(ed, ml)
	if _, err := bundle.Open(b, trust, bundle.Hybrid); err != nil {
		t.Fatal(err)
	}
	n, step := 0, 1
	if testing.Short() {
		step = 7 // a sample of the bytes (scripts/test-tinygo.sh); go test flips every one
	}
	for _, mask := range []byte{0x01, 0x20, 0x80} {
		for i := 0; i < len(b); i += step {
			c := bytes.Clone(b)
			c[i] ^= mask
			n++
			if _, err := bundle.Open(c, trust, bundle.Hybrid); err == nil {
				t.Errorf("byte %d flipped (^%#x: %q -> %q) still opens", i, mask, b[i], c[i])
			}
		}
	}
	t.Logf("%d flipped variants of a %d-byte bundle rejected", n, len(b))
}

func TestUnknownKeyRejected(t *testing.T) {
	edA, mlA := key(t, bundle.Ed25519, "ed-a"), key(t, bundle.MLDSA65, "ml-a")
	edB, mlB := key(t, bundle.Ed25519, "ed-b"), key(t, bundle.MLDSA65, "ml-b")
	b := sign(t, testPolicy, edB, mlB)
	_, err := bundle.Open(b, pubs(edA, mlA), bundle.Hybrid)
	wantPolicyError(t, err, "signatures", "signed by unknown ed25519 key "+edB.ID)
	_, err = bundle.Open(b, pubs(edB, mlA), bundle.Hybrid)
	wantPolicyError(t, err, "signatures", "signed by unknown ml-dsa-65 key "+mlB.ID)
}

// A key id that names a trusted key, on a signature made by another key,
// must fail as a bad signature, not be skipped.
func TestWrongKeyUnderTrustedID(t *testing.T) {
	edA, mlA := key(t, bundle.Ed25519, "ed-a"), key(t, bundle.MLDSA65, "ml-a")
	edB := key(t, bundle.Ed25519, "ed-b")
	b := sign(t, testPolicy, edB, mlA)
	b = bytes.Replace(b, []byte(edB.ID), []byte(edA.ID), 1)
	_, err := bundle.Open(b, pubs(edA, mlA), bundle.Hybrid)
	wantPolicyError(t, err, "signatures[0].sig", "ed25519 signature by key "+edA.ID+" does not verify")
}

func TestRotation(t *testing.T) {
	oldEd, oldML := key(t, bundle.Ed25519, "old-ed"), key(t, bundle.MLDSA65, "old-ml")
	newEd, newML := key(t, bundle.Ed25519, "new-ed"), key(t, bundle.MLDSA65, "new-ml")
	bothTrusted := pubs(oldEd, oldML, newEd, newML)
	cases := []struct {
		name    string
		signers []*signing.PrivateKey
		trust   []bundle.PublicKey
	}{
		{"old bundle, both trusted", []*signing.PrivateKey{oldEd, oldML}, bothTrusted},
		{"new bundle, both trusted", []*signing.PrivateKey{newEd, newML}, bothTrusted},
		{"signed by both, only old trusted", []*signing.PrivateKey{oldEd, oldML, newEd, newML}, pubs(oldEd, oldML)},
		{"signed by both, only new trusted", []*signing.PrivateKey{oldEd, oldML, newEd, newML}, pubs(newEd, newML)},
		{"mixed generations", []*signing.PrivateKey{newEd, oldML}, bothTrusted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := bundle.Open(sign(t, testPolicy, c.signers...), c.trust, bundle.Hybrid); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestBadBundles(t *testing.T) {
	ed, ml := key(t, bundle.Ed25519, "ed-a"), key(t, bundle.MLDSA65, "ml-a")
	good := string(sign(t, `{"name":"p","version":"1"}`, ed, ml))
	edSig := good[strings.Index(good, `{"alg":"ed25519"`):strings.Index(good, `,{"alg":"ml-dsa-65"`)]
	cases := []struct {
		name, bundle, field, msg string
	}{
		{"plain policy", testPolicy, "", "policy is not signed"},
		{"not json", `{"ctxgate_bundle":1,`, "", "bundle is not valid JSON"},
		{"array", `[]`, "", "bundle must be a JSON object, got an array"},
		{"version 2", strings.Replace(good, `"ctxgate_bundle":1`, `"ctxgate_bundle":2`, 1), "ctxgate_bundle", "unsupported bundle version 2"},
		{"version string", strings.Replace(good, `"ctxgate_bundle":1`, `"ctxgate_bundle":"1"`, 1), "ctxgate_bundle", `unsupported bundle version "1"`},
		{"extra member", strings.Replace(good, `{"ctxgate_bundle":1,`, `{"ctxgate_bundle":1,"note":"x",`, 1), "note", "unknown bundle member"},
		{"policy not object", `{"ctxgate_bundle":1,"policy":[],"signatures":[]}`, "policy", "must be an object, got an array"},
		{"reformatted", strings.Replace(good, `"policy":{`, `"policy": {`, 1), "", "not in canonical form"},
		{"no signatures", `{"ctxgate_bundle":1,"policy":{},"signatures":[]}`, "signatures", "no signatures"},
		{"signatures missing", `{"ctxgate_bundle":1,"policy":{}}`, "signatures", "must be an array of signatures, got null"},
		{"too many", `{"ctxgate_bundle":1,"policy":{},"signatures":[` + strings.Repeat(edSig+",", 8) + edSig + `]}`, "signatures", "too many signatures: 9"},
		{"unknown alg", strings.Replace(good, `"alg":"ed25519"`, `"alg":"rsa"`, 1), "signatures[0].alg", `unknown signature algorithm "rsa"`},
		{"bad base64", strings.Replace(good, `"sig":"`, `"sig":"*`, 1), "signatures[0].sig", "not valid base64"},
		{"sig member", strings.Replace(good, `"sig":"`, `"sig2":"`, 1), "signatures[0].sig2", "unknown signature member"},
		{"short sig", `{"ctxgate_bundle":1,"policy":{"name":"p","version":"1"},"signatures":[{"alg":"ed25519","key_id":"` + ed.ID + `","sig":"AAAA"}]}`, "signatures[0].sig", "does not verify"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := bundle.Open([]byte(c.bundle), pubs(ed, ml), bundle.Ed25519Only)
			wantPolicyError(t, err, c.field, c.msg)
		})
	}
	_, err := bundle.Open([]byte(good), nil, bundle.Hybrid)
	wantPolicyError(t, err, "trust_keys", "no trust keys configured")
}

func TestMinVersion(t *testing.T) {
	ed, ml := key(t, bundle.Ed25519, "ed-a"), key(t, bundle.MLDSA65, "ml-a")
	b := sign(t, testPolicy, ed, ml) // version 1.2.0
	for _, c := range []struct {
		min, err string
	}{
		{"", ""}, {"1.2.0", ""}, {"1.1.9", ""}, {"1.2", ""},
		{"1.10", "policy version 1.2.0 is older than the minimum 1.10"},
		{"2", "older than the minimum 2"},
	} {
		_, err := bundle.OpenWith(b, bundle.Options{Trust: pubs(ed, ml), MinVersion: c.min})
		if c.err == "" {
			if err != nil {
				t.Errorf("min %q: %v", c.min, err)
			}
			continue
		}
		wantPolicyError(t, err, "policy.version", c.err)
	}
	noVersion := sign(t, `{"name":"x"}`, ed, ml)
	_, err := bundle.OpenWith(noVersion, bundle.Options{Trust: pubs(ed, ml), MinVersion: "1"})
	wantPolicyError(t, err, "policy.version", "missing")
}

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1", "1", 0}, {"1.0", "1", 1}, {"1.9", "1.10", -1}, {"2", "10", -1},
		{"1.2.0", "1.2", 1}, {"01.2", "1.2", 0}, {"1.2-rc1", "1.2-rc2", -1},
		{"2024-01-02", "2024-01-10", -1}, {"", "1", -1}, {"a", "1", 1},
	} {
		if got := bundle.CompareVersions(c.a, c.b); got != c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := bundle.CompareVersions(c.b, c.a); got != -c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
}

func TestParseMode(t *testing.T) {
	for s, want := range map[string]bundle.Mode{"": bundle.Hybrid, "hybrid": bundle.Hybrid, "ed25519": bundle.Ed25519Only, "ml-dsa-65": bundle.MLDSA65Only} {
		got, err := bundle.ParseMode(s)
		if err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v", s, got, err)
		}
		if s != "" && got.String() != s {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), s)
		}
	}
	if got, err := bundle.ParseMode("ml-dsa"); err != nil || got != bundle.MLDSA65Only {
		t.Errorf("ParseMode(ml-dsa) = %v, %v; want the ML-DSA-65 mode", got, err)
	}
	for _, s := range []string{"rsa", "ML-DSA", "ml-dsa-44", "Hybrid", " ed25519"} {
		_, err := bundle.ParseMode(s)
		wantPolicyError(t, err, "mode", "unknown signature mode")
	}
}

func TestIsBundle(t *testing.T) {
	ed := key(t, bundle.Ed25519, "ed-a")
	if !bundle.IsBundle(sign(t, testPolicy, ed)) {
		t.Error("a bundle is not recognised")
	}
	if bundle.IsBundle([]byte(testPolicy)) || bundle.IsBundle([]byte("nope")) {
		t.Error("a plain policy or junk is taken for a bundle")
	}
}

// OpenValue accepts a bundle embedded in a larger document, in any encoding
// with the same content, and still refuses a changed policy.
func TestOpenValue(t *testing.T) {
	ed, ml := key(t, bundle.Ed25519, "ed-a"), key(t, bundle.MLDSA65, "ml-a")
	b := string(sign(t, testPolicy, ed, ml))
	canon, _ := bundle.Canonical([]byte(testPolicy))
	for name, c := range map[string]struct {
		doc string
		ok  bool
	}{
		"as signed":        {`{"other":1,"policy":` + b + `}`, true},
		"reformatted":      {`{"policy": ` + strings.Replace(b, `"policy":{`, `"policy" : {`, 1) + `}`, true},
		"number rewritten": {`{"policy":` + strings.Replace(b, `"inject":0.72`, `"inject":0.720`, 1) + `}`, false},
	} {
		v, err := jsonx.Parse([]byte(c.doc), 64)
		if err != nil {
			t.Fatal(err)
		}
		got, err := bundle.OpenValue(v.Get("policy"), bundle.Options{Trust: pubs(ed, ml)})
		if c.ok && (err != nil || !bytes.Equal(got, canon)) {
			t.Errorf("%s: %v", name, err)
		}
		if !c.ok {
			wantPolicyError(t, err, "signatures[0].sig", "does not verify")
		}
	}
}
