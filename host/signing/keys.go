// Package signing is the host side of gate/bundle: key generation, key
// files, signing policy bundles, and signed decision receipts. Verification
// of bundles lives in gate/bundle (it must also run inside the Wasm guest);
// this package adds what needs randomness, files and a clock.
package signing

import (
	"errors"
	"io"

	"github.com/cloudflare/circl/sign/ed25519"
	"github.com/cloudflare/circl/sign/mldsa/mldsa65"

	"github.com/ctxgate/ctxgate/gate/bundle"
)

// PrivateKey is one signing key. Key files store only its 32-byte seed; both
// schemes derive the full key pair from it (RFC 8032, FIPS 204 KeyGen).
type PrivateKey struct {
	Alg    bundle.Alg
	ID     string
	Seed   []byte
	public bundle.PublicKey
	ed     ed25519.PrivateKey
	ml     *mldsa65.PrivateKey
}

// Algs lists the schemes keygen can make; "hybrid" means both.
var Algs = []bundle.Alg{bundle.Ed25519, bundle.MLDSA65}

// GenerateKey makes a key pair for alg from 32 bytes of rand. Pass
// crypto/rand.Reader; tests pass a fixed stream to get fixed vectors.
func GenerateKey(alg bundle.Alg, rand io.Reader) (*PrivateKey, error) {
	seed := make([]byte, bundle.SeedSize)
	if _, err := io.ReadFull(rand, seed); err != nil {
		return nil, errors.New("signing: reading key seed: " + err.Error())
	}
	return NewKeyFromSeed(alg, seed)
}

// NewKeyFromSeed derives the key pair of alg from a 32-byte seed.
func NewKeyFromSeed(alg bundle.Alg, seed []byte) (*PrivateKey, error) {
	if len(seed) != bundle.SeedSize {
		return nil, errors.New("signing: a key seed must be 32 bytes")
	}
	k := &PrivateKey{Alg: alg, Seed: append([]byte(nil), seed...)}
	var raw []byte
	switch alg {
	case bundle.Ed25519:
		k.ed = ed25519.NewKeyFromSeed(seed)
		raw = k.ed.Public().(ed25519.PublicKey)
	case bundle.MLDSA65:
		var s [mldsa65.SeedSize]byte
		copy(s[:], seed)
		var pk *mldsa65.PublicKey
		pk, k.ml = mldsa65.NewKeyFromSeed(&s)
		raw = pk.Bytes()
	default:
		return nil, errors.New("signing: unknown algorithm \"" + string(alg) + "\" (want ed25519 or ml-dsa-65)")
	}
	pub, err := bundle.NewPublicKey(alg, raw)
	if err != nil {
		return nil, err
	}
	k.public, k.ID = pub, pub.ID
	return k, nil
}

// Public returns the key's public half, ready for a trust list.
func (k *PrivateKey) Public() bundle.PublicKey { return k.public }

// sign signs msg. ML-DSA-65 signs deterministically (FIPS 204 allows it) with
// an empty context: the same policy and key always give the same bundle
// bytes, which keeps bundles reproducible and the test vectors fixed. The
// signer runs offline on an operator's machine, where the fault and
// side-channel attacks hedged signing defends against are not the threat.
func (k *PrivateKey) sign(msg []byte) []byte {
	switch k.Alg {
	case bundle.Ed25519:
		return ed25519.Sign(k.ed, msg)
	case bundle.MLDSA65:
		sig := make([]byte, mldsa65.SignatureSize)
		if err := mldsa65.SignTo(k.ml, msg, nil, false, sig); err != nil {
			return nil // unreachable: ctx is empty and sig is sized
		}
		return sig
	}
	return nil
}
