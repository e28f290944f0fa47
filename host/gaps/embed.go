package gaps

import (
	"math"
	"math/bits"
)

// The embedding path links two queries when the cosine of their embeddings
// is at least the threshold (0.85, seed 003). Comparing all pairs is O(n²):
// 100k events would be 5·10⁹ dot products. Instead, random-hyperplane LSH
// (SimHash) proposes candidates and only candidates are compared exactly:
//
//   - Each vector gets a 128-bit signature: bit b is the sign of its
//     projection on hyperplane b. Two vectors at angle θ disagree on a bit with
//     probability θ/π, so the Hamming distance of two signatures estimates the
//     angle for the price of two POPCNTs.
//   - lshTables tables each key vectors by lshBits of those bits (a different
//     deterministic sample per table); vectors sharing a key in any table are
//     candidates. At cos 0.85 (θ ≈ 32°) one table catches a pair with
//     probability 0.82¹⁰ ≈ 0.14, so 24 tables catch it with ≈ 0.97; at cos 0.95
//     with ≈ 0.9999. Clusters are connected components, so a missed pair inside
//     a cluster of three or more is usually joined through another member.
//   - A candidate whose Hamming distance is more than 5 standard deviations
//     above what the threshold angle predicts is rejected without the dot
//     product; that drops ~99.9% of unrelated candidates.
//
// Hyperplanes are sparse (Achlioptas / Li et al. "very sparse random
// projections"): each touches 2·√dim coordinates (at least 32) with random
// signs, which makes hashing 100k 384-dimension vectors ~10× cheaper than
// dense Gaussian planes while keeping the sign-agreement probability.
//
// Everything random comes from splitmix64 with a fixed seed: the same input
// gives the same candidates, the same unions, the same clusters.
const (
	sigBits    = 128
	lshTables  = 24
	lshBits    = 10
	maxRepsPer = 6 // comparison targets kept per component per bucket
)

// embedIndex holds the unit vectors of one embedding dimension.
type embedIndex struct {
	dim   int
	units []int32   // unit id of each row
	vecs  []float64 // row-major, each row unit length
	sigs  [][2]uint64
}

func newEmbedIndex(dim int) *embedIndex { return &embedIndex{dim: dim} }

func (ix *embedIndex) add(unit int32, v []float64) {
	var ss float64
	for _, x := range v {
		ss += float64(x * x)
	}
	inv := 1 / math.Sqrt(ss)
	for _, x := range v {
		ix.vecs = append(ix.vecs, x*inv)
	}
	ix.units = append(ix.units, unit)
}

func (ix *embedIndex) row(i int32) []float64 {
	d := int32(ix.dim)
	return ix.vecs[i*d : (i+1)*d : (i+1)*d]
}

// dot is written with explicit float64 conversions so that no compiler fuses
// the multiply-add (the Go spec allows it on arm64, ppc64, s390x): a pair at
// cosine 0.85 ± 1e-16 must decide the same on every machine.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += float64(a[i] * b[i])
		s1 += float64(a[i+1] * b[i+1])
		s2 += float64(a[i+2] * b[i+2])
		s3 += float64(a[i+3] * b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += float64(a[i] * b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// splitmix64 is a tiny, well-mixed PRNG with a 64-bit state (Steele et al.),
// used so that hashing never depends on math/rand's algorithm or version.
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (s *splitmix64) intn(n int) int { return int(s.next() % uint64(n)) }

// sparsePlane is one hyperplane: coordinates and signs.
type sparsePlane struct {
	idx []int32
	neg []bool
}

func makePlanes(dim int, seed uint64) []sparsePlane {
	rng := splitmix64(seed ^ uint64(dim)*0x9e3779b97f4a7c15)
	nnz := 2 * int(math.Ceil(math.Sqrt(float64(dim))))
	if nnz < 32 {
		nnz = 32
	}
	dense := nnz >= dim
	planes := make([]sparsePlane, sigBits)
	for b := range planes {
		p := &planes[b]
		if dense {
			p.idx = make([]int32, dim)
			p.neg = make([]bool, dim)
			for i := range p.idx {
				p.idx[i] = int32(i)
				p.neg[i] = rng.next()&1 == 1
			}
			continue
		}
		p.idx = make([]int32, nnz)
		p.neg = make([]bool, nnz)
		for i := range p.idx {
			p.idx[i] = int32(rng.intn(dim))
			p.neg[i] = rng.next()&1 == 1
		}
	}
	return planes
}

func (ix *embedIndex) sign(seed uint64) {
	planes := makePlanes(ix.dim, seed)
	n := len(ix.units)
	ix.sigs = make([][2]uint64, n)
	for i := 0; i < n; i++ {
		v := ix.row(int32(i))
		var sig [2]uint64
		for b := range planes {
			var s float64
			p := &planes[b]
			for j, c := range p.idx {
				if p.neg[j] {
					s -= v[c]
				} else {
					s += v[c]
				}
			}
			if s >= 0 {
				sig[b>>6] |= 1 << (b & 63)
			}
		}
		ix.sigs[i] = sig
	}
}

// maxHamming is the largest signature distance a pair at cosine cos can
// plausibly have: the binomial mean for angle acos(cos) plus 5 standard
// deviations. A pair above it is rejected without the exact dot product.
func maxHamming(cos float64) int {
	if cos <= -1 {
		return sigBits
	}
	p := math.Acos(math.Min(1, cos)) / math.Pi
	m := float64(sigBits)*p + 5*math.Sqrt(float64(sigBits)*p*(1-p)) + 2
	if m > sigBits {
		return sigBits
	}
	return int(m)
}

// tableBits returns, for each table, lshBits distinct signature bit positions.
func tableBits(seed uint64) [lshTables][lshBits]uint8 {
	rng := splitmix64(seed ^ 0x5bd1e9955bd1e995)
	var out [lshTables][lshBits]uint8
	for t := range out {
		var perm [sigBits]uint8
		for i := range perm {
			perm[i] = uint8(i)
		}
		for i := 0; i < lshBits; i++ { // partial Fisher-Yates
			j := i + rng.intn(sigBits-i)
			perm[i], perm[j] = perm[j], perm[i]
		}
		copy(out[t][:], perm[:lshBits])
	}
	return out
}

// embedStats says how much work the embedding path did.
type embedStats struct {
	Candidates int // pairs proposed by the tables
	Compared   int // pairs that passed the Hamming filter and were dot-producted
	Linked     int // pairs at or above the threshold that joined two components
}

// link unions, in uf, every candidate pair at or above cos. Units are the
// union-find ids.
func (ix *embedIndex) link(uf *unionFind, cos float64, seed uint64) embedStats {
	var st embedStats
	n := len(ix.units)
	if n < 2 {
		return st
	}
	ix.sign(seed)
	maxHam := maxHamming(cos)
	tb := tableBits(seed)
	keys := make([]uint16, n)
	count := make([]int32, 1<<lshBits+1)
	order := make([]int32, n)
	type entry struct {
		root  int32
		nreps int
		reps  [maxRepsPer]int32 // rows
	}
	var entries []entry

	similar := func(a, b int32) bool {
		sa, sb := ix.sigs[a], ix.sigs[b]
		st.Candidates++
		if bits.OnesCount64(sa[0]^sb[0])+bits.OnesCount64(sa[1]^sb[1]) > maxHam {
			return false
		}
		st.Compared++
		return dot(ix.row(a), ix.row(b)) >= cos
	}

	for t := 0; t < lshTables; t++ {
		for i := range count {
			count[i] = 0
		}
		for i := 0; i < n; i++ {
			sig := ix.sigs[i]
			var k uint16
			for j, b := range tb[t] {
				k |= uint16(sig[b>>6]>>(b&63)&1) << j
			}
			keys[i] = k
			count[int(k)+1]++
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		// Counting sort: stable, so every bucket lists rows in input order.
		pos := append([]int32(nil), count[:1<<lshBits]...)
		for i := 0; i < n; i++ {
			order[pos[keys[i]]] = int32(i)
			pos[keys[i]]++
		}
		for bk := 0; bk < 1<<lshBits; bk++ {
			members := order[count[bk]:count[bk+1]]
			if len(members) < 2 {
				continue
			}
			// Within a bucket, compare each row with a few representatives of
			// each component already seen there, not with every earlier row:
			// a 50k-event cluster would otherwise cost 50k² comparisons.
			entries = entries[:0]
			for _, x := range members {
				ux := ix.units[x]
				rx := uf.find(ux)
				joined := -1
				for ei := range entries {
					e := &entries[ei]
					e.root = uf.find(e.root)
					if e.root == rx {
						if joined < 0 {
							joined = ei
						}
						continue
					}
					for _, r := range e.reps[:e.nreps] {
						if similar(x, r) {
							rx = uf.union(ux, ix.units[r])
							e.root = rx
							st.Linked++
							if joined < 0 {
								joined = ei
							}
							break
						}
					}
				}
				if joined < 0 {
					entries = append(entries, entry{root: rx, nreps: 1, reps: [maxRepsPer]int32{x}})
					continue
				}
				if e := &entries[joined]; e.nreps < maxRepsPer {
					e.reps[e.nreps] = x
					e.nreps++
				}
			}
		}
	}
	return st
}
