package gaps

import (
	"errors"
	"strconv"
)

// Options control clustering and diagnosis. The zero value is not useful:
// start from DefaultOptions.
type Options struct {
	// Cosine links two queries with embeddings (0.85, as the support-agent article clusters).
	Cosine float64
	// Jaccard links two queries' term sets when at least one has no
	// embedding (0.6: docs/gaps.md).
	Jaccard float64
	// Seed fixes the LSH hyperplanes. Changing it may change which borderline
	// pairs are found, never whether a reported link is real.
	Seed uint64
	// MaxExamples bounds the example queries listed per cluster.
	MaxExamples int
	Thresholds  Thresholds
}

// DefaultSeed is the LSH seed used unless a caller picks another.
const DefaultSeed = 0x63747867617465 // "ctxgate"

// DefaultOptions are the documented defaults (docs/gaps.md).
func DefaultOptions() Options {
	return Options{Cosine: 0.85, Jaccard: 0.6, Seed: DefaultSeed, MaxExamples: 5, Thresholds: DefaultThresholds()}
}

func (o *Options) validate() error {
	if !(o.Cosine > 0 && o.Cosine <= 1) {
		return errors.New("cosine threshold must be in (0, 1], got " + ftoa(o.Cosine))
	}
	if !(o.Jaccard > 0 && o.Jaccard <= 1) {
		return errors.New("jaccard threshold must be in (0, 1], got " + ftoa(o.Jaccard))
	}
	if o.MaxExamples < 0 {
		return errors.New("max examples must be >= 0")
	}
	return o.Thresholds.validate()
}

// Stats say how much work clustering did; they are deterministic counts.
type Stats struct {
	Events          int `json:"events"`
	DistinctQueries int `json:"distinct_queries"`
	Embedded        int `json:"embedded_queries"`
	Clusters        int `json:"clusters"`
	// Embedding path: pairs proposed by LSH, compared exactly, and linked.
	EmbedCandidates int `json:"embed_candidates"`
	EmbedCompared   int `json:"embed_compared"`
	EmbedLinked     int `json:"embed_linked"`
	// Lexical path: distinct term sets, pairs verified, pairs linked.
	LexSets       int `json:"lex_sets"`
	LexCandidates int `json:"lex_candidates"`
	LexLinked     int `json:"lex_linked"`
}

// unit is one distinct query (by normQuery): the thing clustering links.
type unit struct {
	key    string
	text   string // the first spelling seen
	events []int32
	emb    []float64 // the first event's embedding, nil when none had one
	noEmb  bool      // some event of this unit had no embedding
	terms  []string
}

// buildUnits groups events by normalised query text, in first-seen order.
func buildUnits(events []Event) []unit {
	var units []unit
	idx := make(map[string]int32, len(events))
	for i := range events {
		ev := &events[i]
		k := normQuery(ev.Query)
		u, ok := idx[k]
		if !ok {
			u = int32(len(units))
			idx[k] = u
			units = append(units, unit{key: k, text: ev.Query})
		}
		un := &units[u]
		un.events = append(un.events, int32(i))
		switch {
		case ev.QueryEmbedding == nil:
			un.noEmb = true
		case un.emb == nil:
			un.emb = ev.QueryEmbedding
		}
	}
	// Terms feed the lexical path and lexical centrality, both of which only
	// concern units without an embedding: a fully embedded file skips them.
	for i := range units {
		if units[i].noEmb {
			for j := range units {
				units[j].terms = queryTerms(units[j].text)
			}
			break
		}
	}
	return units
}

// components links units by both paths and returns each component's units,
// components in order of their first unit, units in input order.
func components(units []unit, opt *Options, st *Stats) [][]int32 {
	uf := newUnionFind(len(units))
	// Embedding path, one index per dimension: vectors of different models
	// cannot be compared.
	var dims []int
	perDim := map[int]int{}
	for i := range units {
		if e := units[i].emb; e != nil {
			if perDim[len(e)] == 0 {
				dims = append(dims, len(e))
			}
			perDim[len(e)]++
		}
	}
	byDim := make(map[int]*embedIndex, len(dims))
	for _, d := range dims {
		byDim[d] = newEmbedIndex(d)
		byDim[d].grow(perDim[d])
	}
	for i := range units {
		if e := units[i].emb; e != nil {
			byDim[len(e)].add(int32(i), e)
			st.Embedded++
		}
	}
	for _, d := range dims {
		es := byDim[d].link(uf, opt.Cosine, opt.Seed)
		st.EmbedCandidates += es.Candidates
		st.EmbedCompared += es.Compared
		st.EmbedLinked += es.Linked
		byDim[d] = nil // free the vectors before the lexical pass
	}
	lex := make([]lexUnit, len(units))
	for i := range units {
		lex[i] = lexUnit{terms: units[i].terms, noEmb: units[i].noEmb || units[i].emb == nil}
	}
	ls := linkLexical(lex, uf, opt.Jaccard)
	st.LexSets, st.LexCandidates, st.LexLinked = ls.Sets, ls.Candidates, ls.Linked

	slot := make(map[int32]int, 16)
	var comps [][]int32
	for i := range units {
		r := uf.find(int32(i))
		c, ok := slot[r]
		if !ok {
			c = len(comps)
			slot[r] = c
			comps = append(comps, nil)
		}
		comps[c] = append(comps[c], int32(i))
	}
	return comps
}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
