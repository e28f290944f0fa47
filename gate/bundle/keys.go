package bundle

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/cloudflare/circl/sign/ed25519"
	"github.com/cloudflare/circl/sign/mldsa/mldsa65"

	"github.com/ctxgate/ctxgate/gate"
)

// Alg names a signature scheme as it appears in bundles, key files and
// receipts.
type Alg string

const (
	Ed25519 Alg = "ed25519"   // RFC 8032 Ed25519 (pure, no context)
	MLDSA65 Alg = "ml-dsa-65" // FIPS 204 ML-DSA-65, empty context string
)

// Sizes of raw keys and signatures, per scheme.
const (
	Ed25519PublicKeySize = ed25519.PublicKeySize
	Ed25519SignatureSize = ed25519.SignatureSize
	MLDSA65PublicKeySize = mldsa65.PublicKeySize
	MLDSA65SignatureSize = mldsa65.SignatureSize
	// SeedSize is the private key as key files store it: the 32-byte seed
	// both schemes derive their key pair from.
	SeedSize = 32
)

// PublicKey is one trusted verification key. Build it with NewPublicKey or
// ParseTrust, which derive ID from the key itself, so an ID can never name a
// key it was not computed from.
type PublicKey struct {
	Alg Alg
	ID  string // KeyID(Alg, Raw)
	Raw []byte // the scheme's raw public key encoding

	ml *mldsa65.PublicKey // unpacked once: verification reuses it
}

// KeyID is the first 16 hex characters of sha256(alg || raw public key).
// Public key sizes are fixed per scheme, so the concatenation is unambiguous.
func KeyID(alg Alg, raw []byte) string {
	h := sha256.New()
	h.Write([]byte(alg))
	h.Write(raw)
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:8])
}

// NewPublicKey checks a raw public key's size for its scheme and returns it
// with its key id.
func NewPublicKey(alg Alg, raw []byte) (PublicKey, error) {
	k, err := newPublicKey(alg, raw)
	if err != nil {
		return PublicKey{}, err
	}
	return k, nil
}

// newPublicKey returns the concrete error type, so callers can re-root its
// field without a type assertion (and without a typed-nil error interface).
func newPublicKey(alg Alg, raw []byte) (PublicKey, *gate.Error) {
	k := PublicKey{Alg: alg, Raw: append([]byte(nil), raw...)}
	switch alg {
	case Ed25519:
		if len(raw) != Ed25519PublicKeySize {
			return PublicKey{}, sizeError("public", alg, Ed25519PublicKeySize, len(raw))
		}
	case MLDSA65:
		if len(raw) != MLDSA65PublicKeySize {
			return PublicKey{}, sizeError("public", alg, MLDSA65PublicKeySize, len(raw))
		}
		var buf [mldsa65.PublicKeySize]byte
		copy(buf[:], raw)
		k.ml = new(mldsa65.PublicKey)
		k.ml.Unpack(&buf)
	default:
		return PublicKey{}, unknownAlg("alg", alg)
	}
	k.ID = KeyID(alg, k.Raw)
	return k, nil
}

// verify reports whether sig is this key's signature over msg. Sizes are
// checked here so that no malformed input reaches the scheme code.
func (k *PublicKey) verify(msg, sig []byte) bool {
	switch k.Alg {
	case Ed25519:
		return len(k.Raw) == Ed25519PublicKeySize && len(sig) == Ed25519SignatureSize &&
			ed25519.Verify(ed25519.PublicKey(k.Raw), msg, sig)
	case MLDSA65:
		return k.ml != nil && len(sig) == MLDSA65SignatureSize &&
			mldsa65.Verify(k.ml, msg, nil, sig)
	}
	return false
}

func sizeError(field string, alg Alg, want, got int) *gate.Error {
	return bad(field, string(alg)+" key must be "+itoa(want)+" bytes, got "+itoa(got))
}

func unknownAlg(field string, alg Alg) *gate.Error {
	return bad(field, "unknown signature algorithm \""+string(alg)+"\" (want ed25519 or ml-dsa-65)")
}
