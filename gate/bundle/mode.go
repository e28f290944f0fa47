package bundle

// Mode says which signatures a bundle must carry to open.
type Mode uint8

const (
	// Hybrid (the zero value, so the default) needs a valid Ed25519 AND a
	// valid ML-DSA-65 signature from trusted keys: a forger must break both
	// the classic and the post-quantum scheme.
	Hybrid Mode = iota
	// Ed25519Only needs a valid Ed25519 signature; other schemes are ignored.
	Ed25519Only
	// MLDSA65Only needs a valid ML-DSA-65 signature; other schemes are ignored.
	MLDSA65Only
)

// ParseMode reads a mode name as configs and flags spell it: "hybrid" (or
// ""), "ed25519", "ml-dsa-65".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "hybrid":
		return Hybrid, nil
	case string(Ed25519):
		return Ed25519Only, nil
	case string(MLDSA65):
		return MLDSA65Only, nil
	}
	return Hybrid, bad("mode", "unknown signature mode \""+s+"\" (want hybrid, ed25519 or ml-dsa-65)")
}

func (m Mode) String() string {
	switch m {
	case Ed25519Only:
		return string(Ed25519)
	case MLDSA65Only:
		return string(MLDSA65)
	}
	return "hybrid"
}

// requires reports whether the mode checks signatures of alg.
func (m Mode) requires(alg Alg) bool {
	switch m {
	case Hybrid:
		return alg == Ed25519 || alg == MLDSA65
	case Ed25519Only:
		return alg == Ed25519
	case MLDSA65Only:
		return alg == MLDSA65
	}
	return false
}
