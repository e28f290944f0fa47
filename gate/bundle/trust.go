package bundle

import "github.com/ctxgate/ctxgate/gate/jsonx"

// ParseTrust reads trusted public keys: a key set {"keys": [key, ...]} (what
// `ctxgate keygen` writes to PREFIX.pub), a bare array of keys, or a single
// key object. A key is {"alg", "key_id", "public"} with the raw public key in
// standard base64. The key id is recomputed and must match, and a private
// key is refused: trust files are copied to every node.
func ParseTrust(data []byte) ([]PublicKey, error) {
	v, err := parse(data)
	if err != nil {
		return nil, bad("trust_keys", "not valid JSON: "+err.Error())
	}
	list, field := v, "trust_keys"
	switch v.Kind() {
	case jsonx.Object:
		if v.Get("keys") == nil {
			k, err := parseKey(v, field)
			if err != nil {
				return nil, err
			}
			return []PublicKey{k}, nil
		}
		for i := 0; i < v.Len(); i++ {
			if v.Key(i) != "keys" {
				return nil, bad(field+"."+v.Key(i), "unknown key set member")
			}
		}
		list, field = v.Get("keys"), field+".keys"
		if list.Kind() != jsonx.Array {
			return nil, bad(field, "must be an array of keys, got "+list.Kind().String())
		}
	case jsonx.Array:
	default:
		return nil, bad(field, "must be a key, a key array or {\"keys\": [...]}, got "+v.Kind().String())
	}
	if list.Len() == 0 {
		return nil, bad(field, "no keys")
	}
	out := make([]PublicKey, 0, list.Len())
	for i := 0; i < list.Len(); i++ {
		k, err := parseKey(list.Index(i), index(field, i))
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

func parseKey(v *jsonx.Value, field string) (PublicKey, error) {
	if v.Kind() != jsonx.Object {
		return PublicKey{}, bad(field, "must be a key object, got "+v.Kind().String())
	}
	for i := 0; i < v.Len(); i++ {
		switch v.Key(i) {
		case "alg", "key_id", "public":
		case "private":
			return PublicKey{}, bad(field+".private", "a trust key must not hold a private key")
		default:
			return PublicKey{}, bad(field+"."+v.Key(i), "unknown key member")
		}
	}
	alg, err := str(v, "alg", field)
	if err != nil {
		return PublicKey{}, err
	}
	id, err := str(v, "key_id", field)
	if err != nil {
		return PublicKey{}, err
	}
	raw, err := b64(v, "public", field)
	if err != nil {
		return PublicKey{}, err
	}
	k, kerr := newPublicKey(Alg(alg), raw)
	if kerr != nil {
		return PublicKey{}, prefix(kerr, field)
	}
	if k.ID != id {
		return PublicKey{}, bad(field+".key_id", "key id "+id+" does not match the key (its id is "+k.ID+")")
	}
	return k, nil
}
