package gaps

import "sort"

// Links found on wordings and documents are edges; merge joins them into
// clusters. Plain single linkage (join every linked pair) chains in a
// narrow-domain log: "card arrive" links "card delivery", which links
// "delivery fee", which links "fee refund", until one gap holds questions a
// person would never group (measured on a public intent set: docs/gaps.md).
// So edges are taken strongest first, and an edge joins two clusters only
// if their representative wordings agree: some pair among each cluster's
// repsPerCluster most asked wordings has term or character Jaccard of at
// least Options.Guard (0.5; higher trades recall for precision: docs/gaps.md
// has the curve). Links by embedding cosine are joined unconditionally, as
// before: the cosine is already a judgment of meaning.
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

// unitSim is the wording similarity the guard reads.
func unitSim(a, b *unit) float64 {
	return max(jaccard(a.terms, b.terms), jaccardU32(a.grams, b.grams))
}

// mergeEdges joins edges into uf, strongest first (ties by unit ids, so the
// result never depends on the order the paths emitted them).
func mergeEdges(units []unit, uf *unionFind, edges []edge, guard bool, guardSim float64) mergeStats {
	var st mergeStats
	sort.Slice(edges, func(i, j int) bool {
		a, b := &edges[i], &edges[j]
		if a.s != b.s {
			return a.s > b.s
		}
		if a.a != b.a {
			return a.a < b.a
		}
		return a.b < b.b
	})
	// reps[root] lists the component's most asked units, most asked first.
	reps := make([][]int32, len(units))
	better := func(x, y int32) bool {
		if units[x].n != units[y].n {
			return units[x].n > units[y].n
		}
		return x < y
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
				if unitSim(&units[x], &units[y]) >= guardSim-1e-9 {
					return true
				}
			}
		}
		return false
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
