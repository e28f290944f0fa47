package gaps

import "sort"

// Links found on wordings and documents are edges; merge joins them into
// clusters. Plain single linkage (join every linked pair) chains in a
// narrow-domain log: "card arrive" links "card delivery", which links
// "delivery fee", which links "fee refund", until one gap holds questions a
// person would never group (measured on a public intent set: docs/gaps.md).
// So edges are taken strongest first, and an edge joins two clusters only
// if their cores agree throughout: every pair of a wording among one
// cluster's repsPerCluster most asked and one among the other's must have
// a similarity (unitSim) of at least Options.Guard. That is complete
// linkage over each cluster's core wordings: a chain's far ends, which share
// nothing, cannot both be in one core beside a new wording; checking only
// some pair (single linkage on the cores) lets a chain through wherever one
// pair of wordings bridges two topics. Links by embedding cosine are joined
// unconditionally: the cosine is already a judgment of meaning.
const repsPerCluster = 4

type linkKind uint8

const (
	kindTerms linkKind = iota + 1
	kindChars
	kindDocs
)

// links is a set of link kinds, for measuring what each adds (eval_test.go).
type links uint8

func (l links) has(k linkKind) bool { return l&(1<<k) != 0 }

// allLinks is every kind, with the guard.
const allLinks = links(1<<kindTerms | 1<<kindChars | 1<<kindDocs | 1<<guardBit)

const guardBit = 7

type edge struct {
	a, b int32
	s    float32
	kind linkKind
}

type mergeStats struct {
	Joined  [kindDocs + 1]int // edges that joined two clusters, by kind
	Guarded int               // edges refused by the guard
}

// docBonus weighs the documents two wordings' retrieval shared in the
// guard's similarity: wording alone at the guard, or wording a little under
// it where retrieval agrees, two kinds of evidence for one gap.
const docBonus = 0.15

// unitSim is the similarity the guard reads: the better of term and
// character Jaccard, plus docBonus times the share of the smaller doc set
// the other holds (0 when either has none). It ranges over [0, 1.15].
func unitSim(a, b *unit) float64 {
	s := max(jaccard(a.terms, b.terms), jaccardU32(a.grams, b.grams))
	if n := min(len(a.docs), len(b.docs)); n > 0 {
		s += docBonus * float64(overlap(a.docs, b.docs)) / float64(n)
	}
	return s
}

// mergeEdges joins edges into uf, strongest first. Ties, among edges and
// among a cluster's most asked wordings, go by the wordings' normalised text,
// not by unit ids, which follow the order events came in: the guard reads
// the cores, so the clusters would otherwise depend on that order.
func mergeEdges(units []unit, uf *unionFind, edges []edge, guard bool, guardSim float64) mergeStats {
	var st mergeStats
	ends := func(e *edge) (string, string) {
		x, y := units[e.a].key, units[e.b].key
		if y < x {
			x, y = y, x
		}
		return x, y
	}
	sort.Slice(edges, func(i, j int) bool {
		a, b := &edges[i], &edges[j]
		if a.s != b.s {
			return a.s > b.s
		}
		a1, a2 := ends(a)
		b1, b2 := ends(b)
		if a1 != b1 {
			return a1 < b1
		}
		return a2 < b2
	})
	// reps[root] lists the component's most asked units, most asked first.
	reps := make([][]int32, len(units))
	better := func(x, y int32) bool {
		if units[x].n != units[y].n {
			return units[x].n > units[y].n
		}
		return units[x].key < units[y].key
	}
	add := func(list []int32, u int32) []int32 {
		i := sort.Search(len(list), func(i int) bool { return better(u, list[i]) })
		if i >= repsPerCluster {
			return list
		}
		list = append(list, 0)
		copy(list[i+1:], list[i:])
		list[i] = u
		if len(list) > repsPerCluster {
			list = list[:repsPerCluster]
		}
		return list
	}
	if guard {
		for i := range units {
			r := uf.find(int32(i))
			reps[r] = add(reps[r], int32(i))
		}
	}
	agree := func(ra, rb int32) bool {
		for _, x := range reps[ra] {
			for _, y := range reps[rb] {
				if unitSim(&units[x], &units[y]) < guardSim-1e-9 {
					return false
				}
			}
		}
		return true
	}
	for _, e := range edges {
		ra, rb := uf.find(e.a), uf.find(e.b)
		if ra == rb {
			continue
		}
		if guard && !agree(ra, rb) {
			st.Guarded++
			continue
		}
		r := uf.union(ra, rb)
		st.Joined[e.kind]++
		if guard {
			other := ra
			if r == ra {
				other = rb
			}
			for _, u := range reps[other] {
				reps[r] = add(reps[r], u)
			}
			reps[other] = nil
		}
	}
	return st
}
