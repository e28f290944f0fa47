package bundle

// Signature is one entry of a bundle's or a receipt's "signatures" list.
type Signature struct {
	Alg   Alg
	KeyID string
	Sig   []byte
}

// MaxSignatures bounds the work one document can ask of a verifier: each
// ML-DSA-65 verification costs about a tenth of a millisecond natively and
// more inside Wasm.
const MaxSignatures = 8

// VerifySignatures checks sigs under mode. message returns the bytes the
// signature at index i signs (receipts bind the key id into each message;
// bundles sign one message). field prefixes error fields ("signatures").
//
// The rules, in order:
//   - a signature of a scheme the mode does not check is ignored;
//   - a signature by a key id that is not trusted is ignored (so a bundle
//     signed by the old and the new key during a rotation opens on nodes that
//     trust either), but it is named in the error if nothing trusted signed;
//   - a signature by a trusted key that does not verify is an error at once:
//     a tampered document never opens, even if another signature is good;
//   - each scheme the mode checks needs at least one valid signature.
func VerifySignatures(sigs []Signature, trust []PublicKey, mode Mode, message func(i int) []byte, field string) error {
	if len(trust) == 0 {
		return bad("trust_keys", "no trust keys configured")
	}
	if len(sigs) == 0 {
		return bad(field, "no signatures")
	}
	if len(sigs) > MaxSignatures {
		return bad(field, "too many signatures: "+itoa(len(sigs))+" (max "+itoa(MaxSignatures)+")")
	}
	var okEd, okML bool
	var unknownEd, unknownML string
	for i := range sigs {
		s := &sigs[i]
		if s.Alg != Ed25519 && s.Alg != MLDSA65 {
			return unknownAlg(index(field, i)+".alg", s.Alg)
		}
		if !mode.requires(s.Alg) {
			continue
		}
		k := findKey(trust, s.Alg, s.KeyID)
		if k == nil {
			if s.Alg == Ed25519 && unknownEd == "" {
				unknownEd = s.KeyID
			}
			if s.Alg == MLDSA65 && unknownML == "" {
				unknownML = s.KeyID
			}
			continue
		}
		if !k.verify(message(i), s.Sig) {
			return bad(index(field, i)+".sig", string(s.Alg)+" signature by key "+s.KeyID+" does not verify")
		}
		if s.Alg == Ed25519 {
			okEd = true
		} else {
			okML = true
		}
	}
	if mode.requires(Ed25519) && !okEd {
		return missing(field, Ed25519, mode, unknownEd)
	}
	if mode.requires(MLDSA65) && !okML {
		return missing(field, MLDSA65, mode, unknownML)
	}
	return nil
}

func findKey(trust []PublicKey, alg Alg, id string) *PublicKey {
	for i := range trust {
		if trust[i].Alg == alg && trust[i].ID == id {
			return &trust[i]
		}
	}
	return nil
}

func missing(field string, alg Alg, mode Mode, unknownID string) error {
	if unknownID != "" {
		return bad(field, "signed by unknown "+string(alg)+" key "+unknownID+": no trusted "+string(alg)+" signature")
	}
	return bad(field, "no "+string(alg)+" signature (mode "+mode.String()+" requires one)")
}
