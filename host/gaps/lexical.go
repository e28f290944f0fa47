package gaps

import (
	"cmp"
	"math"
	"sort"
	"strings"
)

// The lexical path links two queries when the Jaccard similarity of their
// term sets (terms.go: lower case, stop words out, light stemming) is at least
// the threshold (0.6 by default; docs/gaps.md says why). It is an exact
// set-similarity join, not an approximation: prefix filtering (Chaudhuri et
// al. 2006; Bayardo et al. "All-Pairs", 2007) guarantees that two sets with
// Jaccard >= t share a term among the first |x| - ceil(t·|x|) + 1 terms of
// each, once terms are ordered rarest first. So only those prefix terms are
// indexed and probed, and the rare terms that make up prefixes have short
// posting lists. A length filter (|y| >= t·|x|) prunes further. Sets are
// processed by increasing size, which is what makes probing only earlier sets
// sufficient.
//
// The support-agent article clusters on embeddings when events carry them, so a pair of units
// that both have embeddings is judged by cosine alone and never linked here;
// the lexical path links pairs where at least one side has no embedding.
// The join finds every pair at or above the threshold; whether an edge joins
// two clusters is decided in merge.go.

// lexUnit is what the lexical join needs to know about one unit.
type lexUnit struct {
	terms []string
	// noEmb is true when at least one of the unit's events has no embedding:
	// then the unit may be linked lexically.
	noEmb   bool
	carried bool // compared in an earlier chunk (stream.go)
}

type lexStats struct {
	Sets       int // distinct non-empty term sets
	Candidates int // set pairs that passed the prefix and length filters
	Linked     int // set pairs at or above the threshold
}

func minOverlap(t float64, n int) int {
	return int(math.Ceil(t*float64(n) - 1e-9))
}

// linkLexical returns, as edges, the unit pairs whose term sets are similar
// enough (merge.go decides which edges join clusters).
func linkLexical(units []lexUnit, t float64) ([]edge, lexStats) {
	var edges []edge
	var st lexStats
	anyPlain := false
	for i := range units {
		anyPlain = anyPlain || units[i].noEmb
	}
	if !anyPlain {
		return nil, st // every unit has an embedding: the cosine path decides alone
	}
	// Group units with identical term sets: the join runs over distinct sets.
	type group struct {
		ids    []int32 // token ids, rarest first
		units  []int32
		nonEmb int32 // first unit that may link lexically, or -1
		fresh  bool  // some unit is not carried
	}
	var groups []group
	byKey := map[string]int{}
	for i, u := range units {
		if len(u.terms) == 0 {
			continue // a query of stop words only: nothing to compare
		}
		key := strings.Join(u.terms, "\x00")
		g, ok := byKey[key]
		if !ok {
			g = len(groups)
			byKey[key] = g
			groups = append(groups, group{nonEmb: -1})
		}
		gr := &groups[g]
		gr.units = append(gr.units, int32(i))
		if u.noEmb && gr.nonEmb < 0 {
			gr.nonEmb = int32(i)
		}
		gr.fresh = gr.fresh || !u.carried
	}
	st.Sets = len(groups)
	for gi := range groups {
		g := &groups[gi]
		if g.nonEmb >= 0 {
			for _, u := range g.units {
				if u != g.nonEmb {
					edges = append(edges, edge{a: g.nonEmb, b: u, s: 1, kind: kindTerms}) // identical sets: Jaccard 1
				}
			}
		}
	}

	// Token ids ordered by document frequency (over distinct sets), rarest
	// first, ties by the term itself so the order never depends on a map.
	df := map[string]int{}
	for gi := range groups {
		for _, term := range units[groups[gi].units[0]].terms {
			df[term]++
		}
	}
	type termDF struct {
		term string
		df   int
	}
	byDF := make([]termDF, 0, len(df))
	for term, n := range df {
		byDF = append(byDF, termDF{term, n})
	}
	sort.Slice(byDF, func(i, j int) bool {
		if byDF[i].df != byDF[j].df {
			return byDF[i].df < byDF[j].df
		}
		return byDF[i].term < byDF[j].term
	})
	vocab := make([]string, len(byDF))
	for i, t := range byDF {
		vocab[i] = t.term
	}
	tid := make(map[string]int32, len(vocab))
	for i, term := range vocab {
		tid[term] = int32(i)
	}
	for gi := range groups {
		terms := units[groups[gi].units[0]].terms
		ids := make([]int32, len(terms))
		for i, term := range terms {
			ids[i] = tid[term]
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		groups[gi].ids = ids
	}

	order := make([]int32, len(groups))
	for i := range order {
		order[i] = int32(i)
	}
	sort.SliceStable(order, func(i, j int) bool { return len(groups[order[i]].ids) < len(groups[order[j]].ids) })

	link := func(a, b *group, s float32) {
		switch {
		case a.nonEmb >= 0:
			for _, u := range b.units {
				edges = append(edges, edge{a: a.nonEmb, b: u, s: s, kind: kindTerms})
			}
		case b.nonEmb >= 0:
			for _, u := range a.units {
				edges = append(edges, edge{a: b.nonEmb, b: u, s: s, kind: kindTerms})
			}
		}
	}

	postings := make([][]int32, len(vocab))
	stamp := make([]int32, len(groups))
	for i := range stamp {
		stamp[i] = -1
	}
	for _, x := range order {
		gx := &groups[x]
		sx := len(gx.ids)
		need := minOverlap(t, sx)
		prefix := sx - need + 1
		for _, tok := range gx.ids[:prefix] {
			for _, y := range postings[tok] {
				if stamp[y] == x {
					continue
				}
				stamp[y] = x
				gy := &groups[y]
				sy := len(gy.ids)
				if sy < need || (gx.nonEmb < 0 && gy.nonEmb < 0) || (!gx.fresh && !gy.fresh) {
					continue
				}
				st.Candidates++
				o := overlap(gx.ids, gy.ids)
				if float64(o) >= t*float64(sx+sy-o)-1e-9 {
					st.Linked++
					link(gx, gy, float32(o)/float32(sx+sy-o))
				}
			}
		}
		for _, tok := range gx.ids[:prefix] {
			postings[tok] = append(postings[tok], x)
		}
	}
	return edges, st
}

// overlap counts the common elements of two sorted lists (token ids in the
// join, terms in jaccard).
func overlap[T cmp.Ordered](a, b []T) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// jaccard is the reference similarity the join implements (used by tests and
// by the report's cluster diagnostics).
func jaccard(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	o := overlap(a, b)
	return float64(o) / float64(len(a)+len(b)-o)
}
