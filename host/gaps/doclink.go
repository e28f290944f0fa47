package gaps

import "sort"

// Two gap events whose retrieval returned the same documents are most often
// the same gap: the knowledge base came closest in the same place and fell
// short there. Each unit keeps the doc ids of its events' top chunks (the
// maxUnitDocs most frequent, empty ids left out); two units link when at
// least half of the smaller doc set is in the other (overlap coefficient
// >= docOverlap) and their wordings share something (term Jaccard >=
// docTermSupport). The wording condition keeps a document that answers
// nothing in particular (a catch-all FAQ page every weak query retrieves)
// from joining unrelated questions.
//
// Clusters are connected components, so a doc id need not pair every unit
// that retrieved it: each unit is compared with the first docPeers units
// that retrieved each of its doc ids (the most asked wordings come first in
// a streamed chunk's carried gaps, and first-seen order otherwise). That
// bounds the work at docPeers comparisons per unit and doc id, however
// popular the document; a pair that meets only further down a long list is
// left to the other links.
const (
	maxUnitDocs    = 8
	docOverlap     = 0.5
	docTermSupport = 0.25
)

const docPeers = 8

// unitDocs picks the maxUnitDocs most frequent doc ids from counts (ties by
// id) and returns them sorted by id, for overlap.
func unitDocs(counts map[string]int) []string { return unitDocsN(counts, maxUnitDocs) }

// unitDocsN is unitDocs with k ids.
func unitDocsN(counts map[string]int, k int) []string {
	if len(counts) == 0 {
		return nil
	}
	ids := make([]string, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if counts[ids[i]] != counts[ids[j]] {
			return counts[ids[i]] > counts[ids[j]]
		}
		return ids[i] < ids[j]
	})
	if len(ids) > k {
		ids = ids[:k]
	}
	sort.Strings(ids)
	return ids
}

type docStats struct {
	Candidates int // unit pairs sharing a (non-hub) doc id
	Linked     int // pairs passing the overlap and wording conditions
}

type docUnit struct {
	docs    []string // sorted
	terms   []string
	noEmb   bool // as on the term path: two embedded queries are the cosine's to judge
	carried bool
}

// linkDocs returns the unit pairs linked by their retrieved documents, as
// edges whose strength is their term Jaccard (they rank after pure wording
// links of the same similarity in merge.go's order).
func linkDocs(units []docUnit) ([]edge, docStats) {
	var st docStats
	var edges []edge
	post := map[string][]int32{}
	for i := range units {
		for _, d := range units[i].docs {
			post[d] = append(post[d], int32(i))
		}
	}
	stamp := make([]int32, len(units))
	for i := range stamp {
		stamp[i] = -1
	}
	for x := range units {
		ux := &units[x]
		for _, d := range ux.docs {
			ps := post[d]
			for _, y := range ps[:min(docPeers, len(ps))] {
				if y == int32(x) || stamp[y] == int32(x) || (ux.carried && units[y].carried) || (!ux.noEmb && !units[y].noEmb) {
					continue
				}
				stamp[y] = int32(x)
				st.Candidates++
				uy := &units[y]
				o := overlap(ux.docs, uy.docs)
				if float64(o) < docOverlap*float64(min(len(ux.docs), len(uy.docs)))-1e-9 {
					continue
				}
				if len(ux.terms) == 0 || len(uy.terms) == 0 {
					continue
				}
				j := jaccard(ux.terms, uy.terms)
				if j < docTermSupport-1e-9 {
					continue
				}
				st.Linked++
				a, b := int32(x), y
				if b < a {
					a, b = b, a
				}
				edges = append(edges, edge{a: a, b: b, s: float32(j), kind: kindDocs})
			}
		}
	}
	return edges, st
}
