package gaps

import (
	"sort"
	"time"
)

// Stream builds a report from events read once, in memory bounded
// independently of their number: the logs of several replicas, one after
// another, of any length.
//
// Events are held in chunks of StreamOptions.ChunkEvents. A log that fits
// in one chunk is clustered by Build, exactly. A longer one is clustered
// chunk by chunk: each chunk's events are clustered together with the gaps
// carried so far, each carried gap taking part through its most asked
// wordings (linkWordings of them), its most retrieved doc ids and one
// embedding; then every gap is folded into a bounded sketch (sketch.go says
// what each keeps exactly and what it approximates) and the chunk is
// released. At most StreamOptions.MaxGaps gaps are carried: past that the
// smallest are dropped, and the report counts them (Stats.DroppedGaps,
// DroppedEvents). Each chunk costs time linear in its size plus the carried
// wordings, so the whole log costs time linear in its events.
type Stream struct {
	opt      Options
	so       StreamOptions
	chunk    []Event
	base     int64 // log position of chunk[0]
	sketches []*sketch
	chunks   int
	tl       timeline
	st       Stats
}

// StreamOptions bound a stream's memory.
type StreamOptions struct {
	// ChunkEvents is how many events are held at once (DefaultChunkEvents).
	ChunkEvents int
	// MaxGaps is how many gaps are carried from one chunk to the next
	// (DefaultMaxGaps).
	MaxGaps int
}

// Defaults: a chunk of 100,000 events without embeddings and its units
// hold some 200 MB; 20,000 carried gaps link through at most 80,000
// wordings and hold some 100 MB. A log of up to 100,000 events is
// clustered exactly.
const (
	DefaultChunkEvents = 100_000
	DefaultMaxGaps     = 20_000
)

// NewStream starts a streamed report.
func NewStream(opt Options, so StreamOptions) (*Stream, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	if so.ChunkEvents <= 0 {
		so.ChunkEvents = DefaultChunkEvents
	}
	if so.MaxGaps <= 0 {
		so.MaxGaps = DefaultMaxGaps
	}
	return &Stream{opt: opt, so: so, tl: timeline{unit: hour}}, nil
}

// Add takes one event. Its Line is kept as read; its position in the
// stream orders ties in the ranking.
func (s *Stream) Add(ev Event) {
	if s.tl.add(&ev) {
		for _, sk := range s.sketches {
			sk.rebucket(s.tl.unit)
		}
	}
	s.chunk = append(s.chunk, ev)
	if len(s.chunk) >= s.so.ChunkEvents {
		s.compact()
	}
}

// Events returns the events held when the log fitted in one chunk (the
// report is then Build's, and its HTML trend reads them), else nil.
func (s *Stream) Events() []Event {
	if s.chunks > 0 {
		return nil
	}
	return s.chunk
}

// Report builds the report. A stream that never outgrew one chunk gives
// exactly Build's report of its events.
func (s *Stream) Report() (*Report, error) {
	if s.chunks == 0 {
		return Build(s.chunk, s.opt)
	}
	if len(s.chunk) > 0 {
		s.compact()
	}
	rep := &Report{Options: reportOptions(&s.opt)}
	rep.Stats = s.st
	rep.Stats.Chunks = s.chunks
	rep.Stats.Clusters = len(s.sketches)
	rep.Stats.DistinctQueries = rep.Stats.DroppedQueries
	rep.Clusters = make([]Cluster, 0, len(s.sketches))
	for _, sk := range s.sketches {
		rep.Stats.DistinctQueries += sk.distinct
		rep.Clusters = append(rep.Clusters, sk.cluster(&s.opt))
	}
	rank(rep.Clusters)
	if !s.tl.first.IsZero() {
		rep.FirstSeen, rep.LastSeen = s.tl.first.UTC().Format(time.RFC3339Nano), s.tl.last.UTC().Format(time.RFC3339Nano)
		rep.FirstSeenText, rep.LastSeenText = ReadableTime(s.tl.first), ReadableTime(s.tl.last)
	}
	tl := s.tl
	rep.timeline = &tl
	return rep, nil
}

// compact clusters the chunk with the carried gaps and folds the result
// into sketches.
func (s *Stream) compact() {
	s.chunks++
	st := &s.st
	st.Events += len(s.chunk)
	units := buildUnits(s.chunk)
	nChunk := len(units)
	byKey := make(map[string]int32, nChunk)
	for i := range units {
		byKey[units[i].key] = int32(i)
	}
	// Carried gaps take part through their most asked wordings; a wording
	// the chunk asked again is the chunk's unit.
	owner := make(map[int32][]int32) // unit -> sketches it carries
	var pre [][2]int32
	for si, sk := range s.sketches {
		first := int32(-1)
		for qi := range sk.queries[:min(linkWordings, len(sk.queries))] {
			q := &sk.queries[qi]
			u, ok := byKey[q.key]
			if !ok {
				if q.terms == nil && q.grams == nil {
					q.terms, q.grams = queryTerms(q.text), wordingGrams(q.text)
				}
				un := unit{key: q.key, text: q.text, n: q.n, noEmb: sk.plain > 0 || (qi > 0 || sk.emb == nil),
					terms: q.terms, grams: q.grams, docs: unitDocs(sk.docs), carried: true}
				if qi == 0 {
					un.emb = sk.emb
				}
				u = int32(len(units))
				units = append(units, un)
			}
			owner[u] = append(owner[u], int32(si))
			if first < 0 {
				first = u
			} else {
				pre = append(pre, [2]int32{first, u})
			}
		}
	}
	var cst Stats
	comps := components(units, &s.opt, &cst, pre)
	st.EmbedCandidates += cst.EmbedCandidates
	st.EmbedCompared += cst.EmbedCompared
	st.EmbedLinked += cst.EmbedLinked
	st.Embedded += cst.Embedded
	st.LexSets += cst.LexSets
	st.LexCandidates += cst.LexCandidates
	st.LexLinked += cst.LexLinked
	st.CharCandidates += cst.CharCandidates
	st.CharLinked += cst.CharLinked
	st.DocCandidates += cst.DocCandidates
	st.DocLinked += cst.DocLinked
	st.JoinedTerms += cst.JoinedTerms
	st.JoinedChars += cst.JoinedChars
	st.JoinedDocs += cst.JoinedDocs
	st.Guarded += cst.Guarded

	merged := make([]bool, len(s.sketches))
	next := make([]*sketch, 0, len(comps))
	for _, comp := range comps {
		ns := &sketch{}
		for _, u := range comp {
			for _, si := range owner[u] {
				if !merged[si] {
					merged[si] = true
					ns.merge(s.sketches[si])
				}
			}
			if int(u) >= nChunk {
				continue
			}
			un := &units[u]
			for _, e := range un.events {
				ev := &s.chunk[e]
				b, timed := s.tl.bucket(ev)
				ns.addEvent(ev, s.base+int64(e), b, timed)
			}
			ns.queries = append(ns.queries, sketchQuery{text: un.text, key: un.key, n: len(un.events), terms: un.terms, grams: un.grams})
			ns.distinct++
			if un.emb != nil {
				ns.embedded++
				if ns.emb == nil {
					ns.emb = un.emb
				}
			}
			if un.noEmb {
				ns.plain++
			}
		}
		ns.trim()
		next = append(next, ns)
	}
	if len(next) > s.so.MaxGaps {
		sort.SliceStable(next, func(i, j int) bool {
			a, b := next[i], next[j]
			if a.count != b.count {
				return a.count > b.count
			}
			if !a.last.Equal(b.last) {
				return a.last.After(b.last)
			}
			return a.firstIdx < b.firstIdx
		})
		for _, sk := range next[s.so.MaxGaps:] {
			st.DroppedGaps++
			st.DroppedEvents += sk.count
			st.DroppedQueries += sk.distinct
		}
		clear(next[s.so.MaxGaps:])
		next = next[:s.so.MaxGaps]
	}
	s.sketches = next
	s.base += int64(len(s.chunk))
	clear(s.chunk) // release the events' maps and slices
	s.chunk = s.chunk[:0]
}

// cluster is the report's view of a sketch.
func (sk *sketch) cluster(opt *Options) Cluster {
	c := Cluster{Count: sk.count, SourceCounts: sk.sc, DistinctQueries: sk.distinct, Policies: sk.policies, last: sk.last,
		firstIdx: int32(min(sk.firstIdx, 1<<31-1)), hist: sk.hist}
	if c.Policies == nil {
		c.Policies = []string{}
	}
	// Representative: as Build's, among the kept wordings, centrality by
	// terms.
	units := make([]unit, len(sk.queries))
	comp := make([]int32, len(sk.queries))
	for i, q := range sk.queries {
		units[i] = unit{key: q.key, text: q.text, n: q.n, terms: queryTerms(q.text)}
		comp[i] = int32(i)
		c.Queries = append(c.Queries, QueryCount{Query: q.text, Key: q.key, Count: q.n})
	}
	c.Queries = sortQueries(c.Queries, centrality(units, comp))
	c.setNames(opt)
	c.Path = pathOf(sk.embedded, sk.plain)
	c.setSpan(sk.first)
	sv := sk.values()
	c.Diagnosis = diagnoseValues(&sv, sk.sc, &opt.Thresholds)
	return c
}
