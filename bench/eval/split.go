package eval

// IsTune puts an item in the tuning half or the held-out half by the parity
// of the FNV-1a hash of "set:id". A hash, not file order, so that the split
// does not follow how the files were sorted (ClapNQ lists answerable first),
// and it never changes when items are added.
func IsTune(set, id string) bool {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, b := range []byte(set + ":" + id) {
		h ^= uint64(b)
		h *= prime
	}
	// The top bit, because FNV's low bit is only the parity of the bytes' low bits.
	return h>>63 == 0
}
