package gaps

import (
	"math"
	"math/bits"
)

// The embedding path links two queries when the cosine of their embeddings is
// at least the threshold (0.85, the support-agent article's). Comparing all
// pairs is O(n²): 100k events would be 5·10⁹ dot products. Above
// exactPairsBelow rows, random-hyperplane LSH (SimHash) proposes candidates
// and only candidates are compared exactly:
//
//   - Each vector gets a 256-bit signature: bit b is the sign of its (mean-
//     centred) projection on hyperplane b. Two vectors at angle θ disagree on a
//     bit with probability θ/π, so the Hamming distance of two signatures
//     estimates the angle for the price of four POPCNTs.
//   - lshTables tables each key vectors by about log2(n) of those bits (a
//     different deterministic sample per table), and each vector also probes
//     the buckets one bit away (multi-probe). Clusters are connected
//     components, so a missed pair inside a cluster of three or more is usually
//     joined through another member.
//   - A candidate whose Hamming distance is more than 5 standard deviations
//     above what the threshold angle predicts is rejected without the dot
//     product; the rest are linked only if the exact cosine passes, so every
//     link is real.
//
// Hyperplanes are sparse (Achlioptas; Li et al. "very sparse random
// projections"): each touches 2·√dim coordinates (at least 32) with random
// signs, which makes hashing 100k 384-dimension vectors ~10× cheaper than
// dense Gaussian planes while keeping the sign-agreement probability.
//
// Everything random comes from splitmix64 with a fixed seed: the same input
// gives the same candidates, the same unions, the same clusters. Measured
// recall against all pairs: cluster_test.go and docs/gaps.md.
const (
	sigBits    = 256
	sigWords   = sigBits / 64
	lshTables  = 24
	minLshBits = 8
	maxLshBits = 18
	maxRepsPer = 6 // comparison targets kept per component per bucket
)

// embedIndex holds the unit vectors of one embedding dimension.
type embedIndex struct {
	dim   int
	units []int32   // unit id of each row
	vecs  []float64 // row-major, each row unit length
	sigs  [][sigWords]uint64
}

func newEmbedIndex(dim int) *embedIndex { return &embedIndex{dim: dim} }

// grow reserves room for n more rows.
func (ix *embedIndex) grow(n int) {
	ix.vecs = make([]float64, 0, len(ix.vecs)+n*ix.dim)
	ix.units = make([]int32, 0, len(ix.units)+n)
}

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

// sparsePlane is one hyperplane: the coordinates it adds and those it
// subtracts (two branch-free loops: a random sign per coordinate would be a
// mispredicted branch half the time).
type sparsePlane struct {
	pos, neg []int32
}

func makePlanes(dim int, seed uint64) []sparsePlane {
	rng := splitmix64(seed ^ uint64(dim)*0x9e3779b97f4a7c15)
	nnz := 2 * int(math.Ceil(math.Sqrt(float64(dim))))
	if nnz < 32 {
		nnz = 32
	}
	dense := nnz >= dim
	if dense {
		nnz = dim
	}
	planes := make([]sparsePlane, sigBits)
	for b := range planes {
		p := &planes[b]
		for i := 0; i < nnz; i++ {
			c := int32(i)
			if !dense {
				c = int32(rng.intn(dim))
			}
			if rng.next()&1 == 1 {
				p.neg = append(p.neg, c)
			} else {
				p.pos = append(p.pos, c)
			}
		}
	}
	return planes
}

// sign computes the signatures of the rows centred on their mean. Real
// sentence embeddings are anisotropic: unrelated queries often sit at cosine
// 0.3-0.7, all inside one narrow cone, where most hyperplanes through the
// origin put every vector on the same side and every vector lands in the same
// bucket (an all-pairs comparison in disguise). Centring spreads the cone
// around the origin. Only hashing is centred: the link decision is the exact
// cosine of the raw vectors. It returns beta = |mean|², the average cosine of
// two rows, which maxHamming needs.
func (ix *embedIndex) sign(seed uint64) (beta float64) {
	planes := makePlanes(ix.dim, seed)
	n := len(ix.units)
	mean := make([]float64, ix.dim)
	for i := 0; i < n; i++ {
		for j, x := range ix.row(int32(i)) {
			mean[j] += x
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
		beta += float64(mean[j] * mean[j])
	}
	project := func(v []float64, p *sparsePlane) float64 {
		var a, b float64
		for _, c := range p.pos {
			a += v[c]
		}
		for _, c := range p.neg {
			b += v[c]
		}
		return a - b
	}
	offset := make([]float64, len(planes))
	for b := range planes {
		offset[b] = project(mean, &planes[b])
	}
	ix.sigs = make([][sigWords]uint64, n)
	for i := 0; i < n; i++ {
		v := ix.row(int32(i))
		var sig [sigWords]uint64
		for b := range planes {
			if project(v, &planes[b]) >= offset[b] {
				sig[b>>6] |= 1 << (b & 63)
			}
		}
		ix.sigs[i] = sig
	}
	return beta
}

// centredCos maps a raw cosine threshold to the centred space the signatures
// live in. For unit vectors x, y with mean m and typical x·m ≈ y·m ≈ |m|² =
// beta, (x-m)·(y-m) / (|x-m||y-m|) ≈ (x·y - beta) / (1 - beta). Atypical
// pairs deviate, so the Hamming filter built on it gets a safety margin in
// cosine on top of its 5 standard deviations.
func centredCos(cos, beta float64) float64 {
	if beta >= 1 {
		return -1
	}
	return (cos-beta)/(1-beta) - centredMargin
}

// centredMargin is the cosine slack of the Hamming filter; the all-pairs
// tests (cluster_test.go) pin that it costs no recall on anisotropic data.
const centredMargin = 0.05

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
func tableBits(seed uint64) [lshTables][maxLshBits]uint8 {
	rng := splitmix64(seed ^ 0x5bd1e9955bd1e995)
	var out [lshTables][maxLshBits]uint8
	for t := range out {
		var perm [sigBits]uint8
		for i := range perm {
			perm[i] = uint8(i)
		}
		for i := 0; i < maxLshBits; i++ { // partial Fisher-Yates
			j := i + rng.intn(sigBits-i)
			perm[i], perm[j] = perm[j], perm[i]
		}
		copy(out[t][:], perm[:maxLshBits])
	}
	return out
}

// embedStats says how much work the embedding path did.
type embedStats struct {
	Candidates int // pairs proposed by the tables
	Compared   int // pairs that passed the Hamming filter and were dot-producted
	Linked     int // pairs at or above the threshold that joined two components
}

// exactPairsBelow: with fewer rows than this, all pairs are compared (at most
// 523k dot products, well under a second). Besides being exact, it avoids
// LSH's weak spot at small n: when one topic dominates a small file, the mean
// the hashing is centred on is that topic, and centring turns its members
// into noise. A variable so that tests can force the LSH path.
var exactPairsBelow = 1024

func (ix *embedIndex) linkAllPairs(uf *unionFind, cos float64) embedStats {
	var st embedStats
	n := int32(len(ix.units))
	for a := int32(0); a < n; a++ {
		ra := ix.row(a)
		for b := a + 1; b < n; b++ {
			st.Candidates++
			st.Compared++
			if dot(ra, ix.row(b)) >= cos && uf.find(ix.units[a]) != uf.find(ix.units[b]) {
				uf.union(ix.units[a], ix.units[b])
				st.Linked++
			}
		}
	}
	return st
}

// link unions, in uf, every candidate pair at or above cos. Units are the
// union-find ids.
//
// Tables are processed one at a time; within a table, rows in input order.
// Each row probes its own bucket and the lshBits buckets one bit away
// (multi-probe LSH, Lv et al. 2007): a pair whose keys differ in one bit is
// still a candidate, which lifts the per-table catch probability at cosine
// 0.85 from 0.07 to about 0.26, and at 0.95 from 0.22 to about 0.58. It then
// joins its own bucket. A bucket holds one entry per component seen in it,
// each with up to maxRepsPer representative rows: a row is compared with the
// representatives of each other component, not with every earlier row, so a
// 50k-event cluster costs O(50k) comparisons per table, not 50k².
func (ix *embedIndex) link(uf *unionFind, cos float64, seed uint64) embedStats {
	var st embedStats
	n := len(ix.units)
	if n < 2 {
		return st
	}
	if n < exactPairsBelow {
		return ix.linkAllPairs(uf, cos)
	}
	beta := ix.sign(seed)
	maxHam := maxHamming(centredCos(cos, beta))
	tb := tableBits(seed)
	// Key length grows with n (about log2 n bits) so that buckets hold a
	// handful of rows whatever the size: a fixed length makes the candidate
	// count grow as n².
	kb := bits.Len(uint(n))
	kb = max(minLshBits, min(maxLshBits, kb))
	type entry struct {
		root  int32
		next  int32 // next entry in the same bucket, -1 at the end
		nreps int32
		reps  [maxRepsPer]int32 // rows
	}
	head := make([]int32, 1<<kb)
	var arena []entry

	similar := func(a, b int32) bool {
		sa, sb := ix.sigs[a], ix.sigs[b]
		st.Candidates++
		h := 0
		for w := range sa {
			h += bits.OnesCount64(sa[w] ^ sb[w])
		}
		if h > maxHam {
			return false
		}
		st.Compared++
		return dot(ix.row(a), ix.row(b)) >= cos
	}

	for t := 0; t < lshTables; t++ {
		for i := range head {
			head[i] = -1
		}
		arena = arena[:0]
		for x := int32(0); x < int32(n); x++ {
			sig := ix.sigs[x]
			var key uint32
			for j, b := range tb[t][:kb] {
				key |= uint32(sig[b>>6]>>(b&63)&1) << j
			}
			ux := ix.units[x]
			rx := uf.find(ux)
			home := int32(-1) // x's component's entry in its own bucket
			for p := -1; p < kb; p++ {
				k := key
				if p >= 0 {
					k ^= 1 << p
				}
				for ei := head[k]; ei >= 0; ei = arena[ei].next {
					e := &arena[ei]
					e.root = uf.find(e.root)
					if e.root != rx {
						for _, r := range e.reps[:e.nreps] {
							if similar(x, r) {
								rx = uf.union(ux, ix.units[r])
								e.root = rx
								st.Linked++
								break
							}
						}
					}
					if p < 0 && e.root == rx && home < 0 {
						home = ei
					}
				}
			}
			if home < 0 {
				// Entries of x's bucket may have joined x's component while
				// probing the neighbours: look once more before adding one.
				for ei := head[key]; ei >= 0; ei = arena[ei].next {
					if uf.find(arena[ei].root) == rx {
						home = ei
						break
					}
				}
			}
			if home < 0 {
				arena = append(arena, entry{root: rx, next: head[key], nreps: 1, reps: [maxRepsPer]int32{x}})
				head[key] = int32(len(arena) - 1)
				continue
			}
			if e := &arena[home]; e.nreps < maxRepsPer {
				e.reps[e.nreps] = x
				e.nreps++
			}
		}
	}
	return st
}
