// Package swar holds what the byte scanners share to test eight bytes of a
// word at a time (SIMD within a register): the byte-broadcast constants and
// the little-endian load. The tests themselves differ per scanner (which
// bytes stop it) and stay with it.
//
// Under TinyGo at -opt=z a call is rarely inlined, so the scanners keep
// their loops free of calls; Load64 is small enough that LLVM folds it into
// one 64-bit load wherever it is called.
package swar

const (
	// Lsb has the lowest bit of every byte set: c*Lsb repeats byte c in all
	// eight bytes.
	Lsb = 0x0101010101010101
	// Msb has the top bit of every byte set: the mask of a per-byte result.
	Msb = 0x8080808080808080
	// Low7 has the low seven bits of every byte set: adding to a word masked
	// with it never carries from one byte into the next.
	Low7 = 0x7F7F7F7F7F7F7F7F
)

// Load64 is s[i:i+8] as a little-endian word (one load on amd64 and wasm).
func Load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// HasByte has the top bit set in the lowest byte of x equal to c (and
// perhaps in later ones: a borrow only runs upwards), 0 when none is.
func HasByte(x uint64, c byte) uint64 {
	y := x ^ uint64(c)*Lsb
	return (y - Lsb) &^ y & Msb
}
