// Package keyhash hashes keys for deterministic splits: the project's fixed
// tune/held-out split (bench/eval.IsTune) and calibration's seeded
// fit/calibration split (host/calibrate).
package keyhash

// Sum64 is FNV-1a over the bytes of every part in turn, then murmur3's
// 64-bit finalizer: FNV-1a alone mixes its last bytes poorly into any
// single bit, and a split reads single bits.
func Sum64(parts ...string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h ^= uint64(p[i])
			h *= prime
		}
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
