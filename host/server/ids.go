package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"hash"
	"sync"
)

// Decision ids are unguessable and self-checking: 16 random bytes from
// crypto/rand (128 bits) followed by the first 16 bytes of
// HMAC-SHA256(key, domain || nonce), base64url without padding (43
// characters). Knowing any number of ids tells nothing about the others,
// and the server checks that an id is one it issued without remembering
// it: feedback can arrive long after the decision has left the bounded
// records store (FeedbackEntries), or at another replica that shares the
// key, and is still recorded. An id the key did not sign is unknown (404).
//
// The key is random per process unless one is configured
// (decision_id_key_file), so by default ids from before a restart are
// unknown. The domain separates decision ids from the ids a fault is logged
// under (faults.go), so feedback on a 500's id is refused as unknown.

const (
	idNonceBytes = 16
	idMACBytes   = 16
	idBytes      = idNonceBytes + idMACBytes
	// idLen is the length of a decision id (base64url of idBytes).
	idLen = (idBytes*8 + 5) / 6

	// MinIDKeyBytes is the shortest decision_id_key_file accepted.
	MinIDKeyBytes = 32
)

type idDomain byte

const (
	idDecision idDomain = 'd'
	idFault    idDomain = 'f'
)

type idIssuer struct {
	macs sync.Pool // hash.Hash: HMAC-SHA256 under the key, Reset before use
}

// newIDIssuer signs ids with key; a nil key is replaced by 32 random bytes.
func newIDIssuer(key []byte) (*idIssuer, error) {
	if key == nil {
		key = make([]byte, MinIDKeyBytes)
		rand.Read(key)
	} else if len(key) < MinIDKeyBytes {
		return nil, errors.New("decision id key: at least 32 bytes are needed")
	}
	key = append([]byte(nil), key...)
	return &idIssuer{macs: sync.Pool{New: func() any { return hmac.New(sha256.New, key) }}}, nil
}

// sum is HMAC(key, domain || nonce).
func (k *idIssuer) sum(d idDomain, nonce []byte, out *[sha256.Size]byte) {
	var msg [1 + idNonceBytes]byte
	msg[0] = byte(d)
	copy(msg[1:], nonce)
	h := k.macs.Get().(hash.Hash)
	h.Reset()
	h.Write(msg[:])
	h.Sum(out[:0])
	k.macs.Put(h)
}

// issue returns a new id of the domain.
func (k *idIssuer) issue(d idDomain) string {
	var b [idBytes]byte
	rand.Read(b[:idNonceBytes]) // never fails (crypto/rand, Go 1.24+)
	var mac [sha256.Size]byte
	k.sum(d, b[:idNonceBytes], &mac)
	copy(b[idNonceBytes:], mac[:idMACBytes])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// valid reports whether id was issued by k in the domain, in constant time
// for ids of the right shape.
func (k *idIssuer) valid(id string, d idDomain) bool {
	if len(id) != idLen {
		return false
	}
	var b [idBytes]byte
	if n, err := base64.RawURLEncoding.Strict().Decode(b[:], []byte(id)); err != nil || n != idBytes {
		return false
	}
	var mac [sha256.Size]byte
	k.sum(d, b[:idNonceBytes], &mac)
	return hmac.Equal(mac[:idMACBytes], b[idNonceBytes:])
}
