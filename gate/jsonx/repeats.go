package jsonx

import (
	"math/bits"

	"github.com/ctxgate/ctxgate/gate/internal/swar"
)

// Repeats finds the first key of a list that repeats an earlier one: an
// object's member names (the parser's duplicate-key check), a request's
// chunk ids. Its cost is linear in the keys' bytes for any input and holds
// nothing the collector has to look at, so a hostile document of 200,000
// keys costs what reading them costs:
//
//   - each key is hashed once (HashKey, by the caller);
//   - (hash, index) pairs, packed into one uint64, are sorted by hash with
//     an LSD radix sort (four byte passes over the hash's top 32 bits),
//     which no choice of keys can slow down, unlike a hash table's probes;
//   - only keys whose hashes share their top 32 bits are compared byte by
//     byte. Keys made to collide (the hash is fast, not strong: anyone can
//     build collisions) only make those runs long; a long run is hashed
//     again with SipHash, which no one can make collide in bulk, and its
//     keys sorted by that. Should both collide, the run is sorted by its
//     bytes: O(n log n) word-at-a-time comparisons, never quadratic.
//
// A map[string] did the same job with strings viewing the input: under
// TinyGo every collection marked each of them by walking its buffer (doc.go,
// "Why offsets and not strings?"), and an object of 200,000 keys froze a
// module for tens of seconds. Everything here is uint64 and int32 slices
// (16 bytes a key), reused from one call to the next.
//
// The zero Repeats is ready to use; it is not safe for concurrent use.
type Repeats struct {
	a, b []uint64 // the keys' hashes, then packed hash<<32 | index; the radix sort's other half
	s, t []uint64 // the same for a long run's SipHashes
	run  []int32  // the indices of a run colliding under both hashes, sorted by key
	cnt  []int32  // the radix sort's 256 counters
}

// Keys gives Repeats the keys it compares: Key(i) is key i's bytes. It is
// called only for keys whose hashes agree.
type Keys interface{ Key(i int) string }

// Hashes returns room for n hashes, which the caller fills with HashKey of
// each key before calling First.
func (r *Repeats) Hashes(n int) []uint64 {
	if cap(r.a) < n {
		r.a, r.b = make([]uint64, n), make([]uint64, n)
	}
	r.a = r.a[:n]
	return r.a
}

// First returns the smallest i such that key i equals some key j < i (the
// first repeat in document order), and that j; (-1, -1) when the keys are
// distinct. The hashes are those Hashes returned, filled in; First
// overwrites them.
func (r *Repeats) First(keys Keys) (int, int) {
	h := r.a
	n := len(h)
	if n < 2 {
		return -1, -1
	}
	if n <= 8 {
		// Pairwise: 28 hash comparisons at most.
		for i := 1; i < n; i++ {
			for j := 0; j < i; j++ {
				if h[j] == h[i] && EqualKeys(keys.Key(j), keys.Key(i)) {
					return i, j
				}
			}
		}
		return -1, -1
	}
	a := r.sorted()
	best, bestOf := -1, -1
	for s := 0; s < n; {
		e := s + 1
		for e < n && a[e]>>32 == a[s]>>32 {
			e++
		}
		if e-s > 1 {
			if i, j := r.inRun(keys, a[s:e]); i >= 0 && (best < 0 || i < best) {
				best, bestOf = i, j
			}
		}
		s = e
	}
	return best, bestOf
}

// sorted packs the hashes into (top 32 bits, index) pairs and returns them
// in order: by hash, then by index. Keys whose hashes share their top 32
// bits are told apart by their bytes (inRun).
func (r *Repeats) sorted() []uint64 {
	a := r.a
	n := len(a)
	for i, h := range a {
		a[i] = h&^(1<<32-1) | uint64(i)
	}
	if n <= 64 {
		// Insertion sort: at most 2,016 moves, less than four radix
		// passes' counters for so few keys.
		for i := 1; i < n; i++ {
			x := a[i]
			j := i
			for j > 0 && a[j-1] > x {
				a[j] = a[j-1]
				j--
			}
			a[j] = x
		}
		return a
	}
	return r.radix32(a, r.b[:n])
}

// radix32 sorts packed values by their top 32 bits, stably (an LSD radix
// sort, four byte passes), using b (as long as a) as the other half; it
// returns whichever holds the result. Entries start in index order, so
// equal top halves keep their indices ascending.
func (r *Repeats) radix32(a, b []uint64) []uint64 {
	n := len(a)
	if r.cnt == nil {
		r.cnt = make([]int32, 256)
	}
	cnt := r.cnt[:256]
	for shift := uint(32); shift < 64; shift += 8 {
		clear(cnt)
		for _, x := range a {
			cnt[byte(x>>shift)]++
		}
		if cnt[byte(a[0]>>shift)] == int32(n) {
			continue // one digit for all: the pass would change nothing
		}
		var sum int32
		for d := range cnt {
			c := cnt[d]
			cnt[d] = sum
			sum += c
		}
		for _, x := range a {
			d := byte(x >> shift)
			b[cnt[d]] = x
			cnt[d]++
		}
		a, b = b, a
	}
	return a
}

// inRun finds the first repeat among the keys of one run (packed entries
// whose hashes share their top 32 bits, indices ascending): the smallest
// index whose key equals an earlier one in the run, and that earlier one.
func (r *Repeats) inRun(keys Keys, run []uint64) (int, int) {
	if len(run) <= 8 {
		return pairwise(keys, run)
	}
	// A long run: keys made to collide under HashKey, which anyone can
	// do. They are hashed again with SipHash, which no one can make
	// collide in bulk (its key is public, but a run of k equal values
	// takes about 2^(64(k-1)/k) tries), and sorted by that: the runs left
	// are short, and compared pairwise.
	if cap(r.s) < len(run) {
		r.s, r.t = make([]uint64, len(run)), make([]uint64, len(run))
	}
	a, b := r.s[:len(run)], r.t[:len(run)]
	for k, x := range run {
		i := uint32(x)
		a[k] = sipHash(keys.Key(int(i)))&^(1<<32-1) | uint64(i)
	}
	a = r.radix32(a, b)
	best, bestOf := -1, -1
	for s := 0; s < len(a); {
		e := s + 1
		for e < len(a) && a[e]>>32 == a[s]>>32 {
			e++
		}
		if e-s > 1 {
			var i, j int
			if e-s <= 8 {
				i, j = pairwise(keys, a[s:e])
			} else {
				// Colliding under both hashes: sort by bytes.
				i, j = r.byBytes(keys, a[s:e])
			}
			if i >= 0 && (best < 0 || i < best) {
				best, bestOf = i, j
			}
		}
		s = e
	}
	return best, bestOf
}

// pairwise is the first repeat among a few packed entries (indices
// ascending), by their bytes.
func pairwise(keys Keys, run []uint64) (int, int) {
	for b := 1; b < len(run); b++ {
		i := int(uint32(run[b]))
		for a := 0; a < b; a++ {
			j := int(uint32(run[a]))
			if EqualKeys(keys.Key(i), keys.Key(j)) {
				return i, j
			}
		}
	}
	return -1, -1
}

// byBytes is the first repeat among the packed entries of a run, sorted by
// the keys' bytes: O(k log k) comparisons whatever the keys.
func (r *Repeats) byBytes(keys Keys, run []uint64) (int, int) {
	idx := r.run[:0]
	for _, x := range run {
		idx = append(idx, int32(uint32(x)))
	}
	r.run = idx
	r.sortRun(keys, idx)
	best, bestOf := -1, -1
	for s := 0; s < len(idx); {
		e := s + 1
		for e < len(idx) && EqualKeys(keys.Key(int(idx[e])), keys.Key(int(idx[s]))) {
			e++
		}
		// Equal keys sort by index: the second is the group's repeat.
		if e-s > 1 && (best < 0 || int(idx[s+1]) < best) {
			best, bestOf = int(idx[s+1]), int(idx[s])
		}
		s = e
	}
	return best, bestOf
}

// sortRun heap-sorts idx by (key bytes, index): O(k log k) for any keys, no
// recursion, no allocation, no closure (under TinyGo a closure's captures
// are a heap object).
func (r *Repeats) sortRun(keys Keys, idx []int32) {
	n := len(idx)
	for i := n/2 - 1; i >= 0; i-- {
		siftDown(keys, idx, i, n)
	}
	for end := n - 1; end > 0; end-- {
		idx[0], idx[end] = idx[end], idx[0]
		siftDown(keys, idx, 0, end)
	}
}

func siftDown(keys Keys, idx []int32, i, n int) {
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && keyLess(keys, idx[c], idx[c+1]) {
			c++
		}
		if !keyLess(keys, idx[i], idx[c]) {
			return
		}
		idx[i], idx[c] = idx[c], idx[i]
		i = c
	}
}

func keyLess(keys Keys, x, y int32) bool {
	if c := CompareKeys(keys.Key(int(x)), keys.Key(int(y))); c != 0 {
		return c < 0
	}
	return x < y
}

// HashKey hashes a key for Repeats: eight bytes a step, each word mixed in
// with a multiply. It is fast rather than strong (Repeats does not rely on
// it to be hard to collide), and the same on every platform.
func HashKey(s string) uint64 {
	const k = 0x9E3779B97F4A7C15
	h := uint64(len(s)) * k
	i := 0
	for ; i+8 <= len(s); i += 8 {
		h = (bits.RotateLeft64(h, 23) ^ swar.Load64(s, i)) * k
	}
	if i < len(s) {
		var w uint64
		if len(s) >= 8 {
			w = swar.Load64(s, len(s)-8) // the last eight bytes, overlapping
		} else {
			for j := len(s) - 1; j >= i; j-- {
				w = w<<8 | uint64(s[j])
			}
		}
		h = (bits.RotateLeft64(h, 23) ^ w) * k
	}
	h ^= h >> 32
	h *= 0xD6E8FEB86659FD93
	return h ^ h>>32
}

// CompareKeys compares a and b as byte strings (-1, 0, +1), eight bytes a
// step: under TinyGo a string comparison is a byte loop.
func CompareKeys(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x, y := swar.Load64(a, i), swar.Load64(b, i); x != y {
			// The lowest differing byte is the first one (little-endian).
			s := uint(bits.TrailingZeros64(x^y)) &^ 7
			if byte(x>>s) < byte(y>>s) {
				return -1
			}
			return 1
		}
	}
	for ; i < n; i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// EqualKeys reports whether a and b are the same bytes (CompareKeys' loop).
func EqualKeys(a, b string) bool { return len(a) == len(b) && CompareKeys(a, b) == 0 }

// sipHash is SipHash-2-4 of s under a fixed key (00 01 ... 0f): a
// pseudo-random function whose collisions cannot be built in bulk even
// knowing the key (Repeats' second hash, for runs built to collide under
// HashKey). TestSipHash holds it to the reference vectors.
func sipHash(s string) uint64 {
	const k0, k1 uint64 = 0x0706050403020100, 0x0f0e0d0c0b0a0908
	v0, v1, v2, v3 := k0^0x736f6d6570736575, k1^0x646f72616e646f6d, k0^0x6c7967656e657261, k1^0x7465646279746573
	i := 0
	for ; i+8 <= len(s); i += 8 {
		m := swar.Load64(s, i)
		v3 ^= m
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0 ^= m
	}
	m := uint64(len(s)) << 56
	for j := len(s) - 1; j >= i; j-- {
		m |= uint64(s[j]) << (8 * (j - i))
	}
	v3 ^= m
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0 ^= m
	v2 ^= 0xff
	for r := 0; r < 4; r++ {
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	}
	return v0 ^ v1 ^ v2 ^ v3
}

func sipRound(v0, v1, v2, v3 uint64) (uint64, uint64, uint64, uint64) {
	v0 += v1
	v1 = bits.RotateLeft64(v1, 13) ^ v0
	v0 = bits.RotateLeft64(v0, 32)
	v2 += v3
	v3 = bits.RotateLeft64(v3, 16) ^ v2
	v0 += v3
	v3 = bits.RotateLeft64(v3, 21) ^ v0
	v2 += v1
	v1 = bits.RotateLeft64(v1, 17) ^ v2
	v2 = bits.RotateLeft64(v2, 32)
	return v0, v1, v2, v3
}
