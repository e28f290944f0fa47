package gaps

import (
	"errors"
	"strconv"
	"strings"
)

// Options control clustering and diagnosis. The zero value is not useful:
// start from DefaultOptions.
type Options struct {
	// Cosine links two queries with embeddings (0.85, as the support-agent article clusters).
	Cosine float64
	// Jaccard links two queries' term sets when at least one has no
	// embedding (0.6: docs/gaps.md).
	Jaccard float64
	// Chars links two queries' character 3-gram sets (charsim.go) when at
	// least one has no embedding (0.5: docs/gaps.md).
	Chars float64
	// Guard: two clusters join only if every pair of their four most asked
	// wordings has a similarity at least this: the better of term and
	// character Jaccard, plus 0.15 times the share of retrieved documents
	// they share (0.4; merge.go).
	Guard float64
	// Seed fixes the LSH hyperplanes. Changing it may change which borderline
	// pairs are found, never whether a reported link is real.
	Seed uint64
	// MaxExamples bounds the example queries listed per cluster.
	MaxExamples int
	Thresholds  Thresholds
	// links picks the link kinds and the guard; zero means all of them
	// (eval_test.go turns them off one by one).
	links links
}

// DefaultSeed is the LSH seed used unless a caller picks another.
const DefaultSeed = 0x63747867617465 // "ctxgate"

// DefaultOptions are the documented defaults (docs/gaps.md).
func DefaultOptions() Options {
	return Options{Cosine: 0.85, Jaccard: 0.6, Chars: 0.5, Guard: 0.4, Seed: DefaultSeed, MaxExamples: 5, Thresholds: DefaultThresholds()}
}

func (o *Options) validate() error {
	if !(o.Cosine > 0 && o.Cosine <= 1) {
		return errors.New("cosine threshold must be in (0, 1], got " + ftoa(o.Cosine))
	}
	if !(o.Jaccard > 0 && o.Jaccard <= 1) {
		return errors.New("jaccard threshold must be in (0, 1], got " + ftoa(o.Jaccard))
	}
	if !(o.Chars > 0 && o.Chars <= 1) {
		return errors.New("chars threshold must be in (0, 1], got " + ftoa(o.Chars))
	}
	if !(o.Guard > 0 && o.Guard <= 1) {
		return errors.New("guard must be in (0, 1], got " + ftoa(o.Guard))
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
	// Character path (charsim.go): pairs compared, pairs at or above
	// Options.Chars.
	CharCandidates int `json:"char_candidates"`
	CharLinked     int `json:"char_linked"`
	// Document path (doclink.go): pairs sharing a doc id, pairs linked.
	DocCandidates int `json:"doc_candidates"`
	DocLinked     int `json:"doc_linked"`
	// Joins: links that joined two clusters, by kind (merge.go), and links
	// the guard refused because the two clusters' wordings disagree.
	JoinedTerms int `json:"joined_terms"`
	JoinedChars int `json:"joined_chars"`
	JoinedDocs  int `json:"joined_docs"`
	Guarded     int `json:"guarded"`
	// A streamed report (stream.go) that outgrew one chunk: how many chunks,
	// and the smallest gaps dropped to bound memory, with their events and
	// wordings. Zero, and left out, when the log fitted in one chunk.
	Chunks         int `json:"chunks,omitempty"`
	DroppedGaps    int `json:"dropped_gaps,omitempty"`
	DroppedEvents  int `json:"dropped_events,omitempty"`
	DroppedQueries int `json:"dropped_queries,omitempty"`
}

// unit is one distinct query (by normQuery): the thing clustering links.
type unit struct {
	key    string
	text   string // the first spelling seen
	events []int32
	n      int       // events that asked it
	emb    []float64 // the first event's embedding, nil when none had one
	noEmb  bool      // some event of this unit had no embedding
	terms  []string
	grams  []uint32 // wordingGrams
	docs   []string // unitDocs of its events' top chunks
	// carried: a streamed gap's wording from an earlier chunk (stream.go).
	// Two carried wordings were already compared there: the paths skip
	// such pairs.
	carried bool
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
	// Terms and grams feed the wording links, the guard and centrality.
	for i := range units {
		u := &units[i]
		u.n = len(u.events)
		u.terms = queryTerms(u.text)
		u.grams = wordingGrams(u.text)
		var docs map[string]int
		for _, e := range u.events {
			for _, c := range events[e].TopChunks {
				if c.DocID == "" {
					continue
				}
				if docs == nil {
					docs = map[string]int{}
				}
				docs[c.DocID]++
			}
		}
		u.docs = unitDocs(docs)
	}
	return units
}

// components links units by every path and returns each component's units,
// components in order of their first unit, units in input order. pre are
// pairs already known to be one gap (a streamed gap's wordings).
func components(units []unit, opt *Options, st *Stats, pre [][2]int32) [][]int32 {
	uf := newUnionFind(len(units))
	for _, p := range pre {
		uf.union(p[0], p[1])
	}
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
	use := opt.links
	if use == 0 {
		use = allLinks
	}
	var edges []edge
	if use.has(kindTerms) {
		lex := make([]lexUnit, len(units))
		for i := range units {
			lex[i] = lexUnit{terms: units[i].terms, noEmb: units[i].noEmb || units[i].emb == nil, carried: units[i].carried}
		}
		e, ls := linkLexical(lex, opt.Jaccard)
		edges = append(edges, e...)
		st.LexSets, st.LexCandidates, st.LexLinked = ls.Sets, ls.Candidates, ls.Linked
	}
	if use.has(kindChars) {
		cu := make([]charUnit, len(units))
		for i := range units {
			cu[i] = charUnit{grams: units[i].grams, noEmb: units[i].noEmb || units[i].emb == nil, carried: units[i].carried,
				termKey: strings.Join(units[i].terms, "\x00")}
		}
		e, cs := linkChars(cu, opt.Chars)
		edges = append(edges, e...)
		st.CharCandidates, st.CharLinked = cs.Candidates, cs.Linked
	}
	if use.has(kindDocs) {
		du := make([]docUnit, len(units))
		for i := range units {
			du[i] = docUnit{docs: units[i].docs, terms: units[i].terms, noEmb: units[i].noEmb || units[i].emb == nil, carried: units[i].carried}
		}
		e, ds := linkDocs(du)
		edges = append(edges, e...)
		st.DocCandidates, st.DocLinked = ds.Candidates, ds.Linked
	}
	ms := mergeEdges(units, uf, edges, use&(1<<guardBit) != 0, opt.Guard)
	st.JoinedTerms, st.JoinedChars, st.JoinedDocs, st.Guarded = ms.Joined[kindTerms], ms.Joined[kindChars], ms.Joined[kindDocs], ms.Guarded

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
