package eval

// IsTune puts an item in the tuning half or the held-out half by one bit of
// a hash of "set:id". A hash, not file order, so that the split does not
// follow how the files were sorted (ClapNQ lists answerable first), and an
// item's half never changes when items are added. FNV-1a alone mixes its
// last bytes poorly into any single bit, so murmur3's 64-bit finalizer
// follows it.
func IsTune(set, id string) bool {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, b := range []byte(set + ":" + id) {
		h ^= uint64(b)
		h *= prime
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h&1 == 0
}
