package signing

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"

	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/internal/safefile"
)

// Key files are JSON key sets, one key per line:
//
//	{"keys":[
//	{"alg":"ed25519","key_id":"…","public":"<base64>","private":"<base64 seed>"}
//	]}
//
// A public (trust) file is the same without "private"; gate/bundle.ParseTrust
// reads it. docs/signing.md specifies both.

// MarshalPrivateKeys encodes a secret key file.
func MarshalPrivateKeys(keys []*PrivateKey) []byte {
	out := []byte("{\"keys\":[\n")
	for i, k := range keys {
		out = appendKey(out, k.public, k.Seed)
		if i < len(keys)-1 {
			out = append(out, ',')
		}
		out = append(out, '\n')
	}
	return append(out, "]}\n"...)
}

// MarshalPublicKeys encodes a trust file.
func MarshalPublicKeys(keys []bundle.PublicKey) []byte {
	out := []byte("{\"keys\":[\n")
	for i, k := range keys {
		out = appendKey(out, k, nil)
		if i < len(keys)-1 {
			out = append(out, ',')
		}
		out = append(out, '\n')
	}
	return append(out, "]}\n"...)
}

func appendKey(out []byte, k bundle.PublicKey, seed []byte) []byte {
	out = append(out, `{"alg":"`...)
	out = append(out, k.Alg...)
	out = append(out, `","key_id":"`...)
	out = append(out, k.ID...)
	out = append(out, `","public":"`...)
	out = base64.StdEncoding.AppendEncode(out, k.Raw)
	if seed != nil {
		out = append(out, `","private":"`...)
		out = base64.StdEncoding.AppendEncode(out, seed)
	}
	return append(out, `"}`...)
}

type keyJSON struct {
	Alg     string `json:"alg"`
	KeyID   string `json:"key_id"`
	Public  []byte `json:"public"`
	Private []byte `json:"private"`
}

// ParsePrivateKeys reads a secret key file (a key set or a single key). Each
// key's public half and id are re-derived from its seed and must match what
// the file says, so a file edited by hand cannot sign under a wrong id.
func ParsePrivateKeys(data []byte) ([]*PrivateKey, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, errors.New("signing: not a key file: " + err.Error())
	}
	var set struct {
		Keys []keyJSON `json:"keys"`
	}
	var target any = &set
	if _, ok := probe["keys"]; !ok {
		set.Keys = make([]keyJSON, 1)
		target = &set.Keys[0]
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(target); err != nil {
		return nil, errors.New("signing: not a key file: " + err.Error())
	}
	if len(set.Keys) == 0 {
		return nil, errors.New("signing: key file holds no keys")
	}
	out := make([]*PrivateKey, 0, len(set.Keys))
	for _, kj := range set.Keys {
		if kj.Private == nil {
			return nil, errors.New("signing: key " + kj.KeyID + " has no private key (is this a .pub trust file?)")
		}
		k, err := NewKeyFromSeed(bundle.Alg(kj.Alg), kj.Private)
		if err != nil {
			return nil, err
		}
		if kj.Public != nil && !bytes.Equal(kj.Public, k.public.Raw) {
			return nil, errors.New("signing: key " + kj.KeyID + ": public key does not match the private key")
		}
		if kj.KeyID != "" && kj.KeyID != k.ID {
			return nil, errors.New("signing: key id " + kj.KeyID + " does not match the key (its id is " + k.ID + ")")
		}
		out = append(out, k)
	}
	return out, nil
}

// WriteKeyFile writes data to path, refusing to overwrite: losing a signing
// key to a mistyped --out is not recoverable. Secret files are mode 0600.
func WriteKeyFile(path string, data []byte, secret bool) error {
	perm := os.FileMode(0o644)
	if secret {
		perm = 0o600
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadPrivateKeys reads secret key files; every key in them signs. Like
// ReadTrust it reads only regular files of at most safefile.MaxPolicyBytes.
func ReadPrivateKeys(paths ...string) ([]*PrivateKey, error) {
	var out []*PrivateKey
	for _, p := range paths {
		data, err := safefile.Read(p, safefile.MaxPolicyBytes)
		if err != nil {
			return nil, err
		}
		keys, err := ParsePrivateKeys(data)
		if err != nil {
			return nil, errors.New(p + ": " + err.Error())
		}
		out = append(out, keys...)
	}
	return out, nil
}

// ReadTrust reads trust files (repeat --trust for rotation) into one list,
// dropping a key listed twice. A path that is not a regular file (a FIFO, a
// device), or a file over safefile.MaxPolicyBytes, is refused unread with a
// *safefile.Error.
func ReadTrust(paths ...string) ([]bundle.PublicKey, error) {
	var out []bundle.PublicKey
	seen := map[string]bool{}
	for _, p := range paths {
		data, err := safefile.Read(p, safefile.MaxPolicyBytes)
		if err != nil {
			return nil, err
		}
		keys, err := bundle.ParseTrust(data)
		if err != nil {
			return nil, errors.New(p + ": " + err.Error())
		}
		for _, k := range keys {
			if !seen[string(k.Alg)+k.ID] {
				seen[string(k.Alg)+k.ID] = true
				out = append(out, k)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("signing: no trust keys")
	}
	return out, nil
}
