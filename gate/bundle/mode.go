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
// ""), "ed25519", "ml-dsa-65" (or "ml-dsa": ML-DSA-65 is the one ML-DSA
// parameter set bundles use).
func ParseMode(s string) (Mode, error) {
	if m, ok := modeByName(s); ok {
		return m, nil
	}
	return Hybrid, unknownMode("mode", s)
}

func modeByName(s string) (Mode, bool) {
	switch s {
	case "", "hybrid":
		return Hybrid, true
	case string(Ed25519):
		return Ed25519Only, true
	case string(MLDSA65), "ml-dsa":
		return MLDSA65Only, true
	}
	return Hybrid, false
}

func unknownMode(field, s string) error {
	return bad(field, "unknown signature mode \""+s+"\" (want hybrid, ed25519 or ml-dsa-65)")
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
