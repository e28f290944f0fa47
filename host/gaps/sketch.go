package gaps

import (
	"sort"
	"time"
)

// A sketch is one gap carried from one chunk of a streamed log to the next
// (stream.go): everything the report needs about the gap, in memory bounded
// by constants, not by its events.
//
//   - counts by kind, first and last time, first event: exact;
//   - wordings: the keptWordings most asked, with their counts; a wording
//     that drops out and comes back later starts its count anew, and is
//     counted again in DistinctQueries;
//   - policies: up to keptPolicies names;
//   - signal medians: from a reservoir of sampleSize values per signal
//     (exact below sampleSize events), merged in proportion to the events
//     each side saw;
//   - retrieved doc ids: the keptDocs most frequent;
//   - trend: events per time bucket (exact; the bucket unit coarsens with
//     the log's span, as the report's axis does);
//   - one embedding: the most asked embedded wording's.
const (
	keptWordings   = 8
	linkWordings   = repsPerCluster // wordings a sketch links with in the next chunk
	keptPolicies   = 32
	sampleSize     = 48
	keptDocs       = 8
	sketchQueryCap = keptWordings
)

type sketchQuery struct {
	text, key string
	n         int
	terms     []string // queryTerms, kept so that later chunks need not redo them
	grams     []uint32 // wordingGrams, likewise
}

type sketch struct {
	count    int
	sc       SourceCounts
	first    time.Time
	last     time.Time
	firstIdx int64
	policies []string // sorted
	queries  []sketchQuery
	distinct int
	emb      []float64
	embedded int // wordings with an embedding, for Path
	plain    int // wordings with an event without one
	docs     map[string]int
	samples  []namedSample // a handful of signals: a slice is lighter than a map
	best     *reservoir
	hist     map[int64]int32 // bucket start (Unix seconds) -> events
}

type namedSample struct {
	name string
	r    *reservoir
}

// sample returns the reservoir of the named signal, making it if need be.
func (s *sketch) sample(name string) *reservoir {
	for i := range s.samples {
		if s.samples[i].name == name {
			return s.samples[i].r
		}
	}
	r := &reservoir{}
	s.samples = append(s.samples, namedSample{name, r})
	return r
}

// reservoir keeps up to sampleSize values of a stream of them, each value
// kept with equal probability (Vitter's algorithm R with a deterministic
// generator seeded by the stream position, so the same log gives the same
// sample).
type reservoir struct {
	seen int
	vals []float64
}

func (r *reservoir) add(v float64, pos uint64) {
	r.seen++
	if len(r.vals) < sampleSize {
		r.vals = append(r.vals, v)
		return
	}
	g := splitmix64(pos)
	if j := int(g.next() % uint64(r.seen)); j < sampleSize {
		r.vals[j] = v
	}
}

// merge folds o into r: each side contributes values in proportion to the
// values it saw.
func (r *reservoir) merge(o *reservoir) {
	if o == nil || o.seen == 0 {
		return
	}
	if r.seen+o.seen <= sampleSize || len(r.vals)+len(o.vals) <= sampleSize {
		r.vals = append(r.vals, o.vals...)
		r.seen += o.seen
		return
	}
	kr := int(float64(sampleSize)*float64(r.seen)/float64(r.seen+o.seen) + 0.5)
	kr = min(max(kr, sampleSize-len(o.vals)), len(r.vals))
	vals := make([]float64, 0, sampleSize)
	vals = append(vals, r.vals[:kr]...)
	vals = append(vals, o.vals[:min(sampleSize-kr, len(o.vals))]...)
	r.vals, r.seen = vals, r.seen+o.seen
}

// addEvent counts one event of the gap; pos is its position in the log.
func (s *sketch) addEvent(ev *Event, pos int64, bucket int64, timed bool) {
	if s.count == 0 || pos < s.firstIdx {
		s.firstIdx = pos
	}
	s.count++
	s.sc.add(ev.Kind)
	if ev.HasTime {
		if s.first.IsZero() || ev.Time.Before(s.first) {
			s.first = ev.Time
		}
		if ev.Time.After(s.last) {
			s.last = ev.Time
		}
	}
	if timed {
		if s.hist == nil {
			s.hist = map[int64]int32{}
		}
		s.hist[bucket]++
	}
	if p := policyName(ev.Policy); p != "" {
		s.addPolicy(p)
	}
	for _, c := range ev.TopChunks {
		if c.DocID != "" {
			if s.docs == nil {
				s.docs = map[string]int{}
			}
			s.docs[c.DocID]++
		}
	}
	for name, v := range ev.Signals {
		s.sample(name).add(v, uint64(pos)^hashString(name))
	}
	if b, ok := bestScore(ev); ok {
		if s.best == nil {
			s.best = &reservoir{}
		}
		s.best.add(b, uint64(pos))
	}
}

func (s *sketch) addPolicy(p string) {
	i := sort.SearchStrings(s.policies, p)
	if i < len(s.policies) && s.policies[i] == p {
		return
	}
	if len(s.policies) >= keptPolicies {
		return
	}
	s.policies = append(s.policies, "")
	copy(s.policies[i+1:], s.policies[i:])
	s.policies[i] = p
}

// merge folds o into s (o is not used afterwards).
func (s *sketch) merge(o *sketch) {
	if o.count == 0 {
		return
	}
	if s.count == 0 || o.firstIdx < s.firstIdx {
		s.firstIdx = o.firstIdx
	}
	s.count += o.count
	s.sc.RefusalHard += o.sc.RefusalHard
	s.sc.RefusalSoft += o.sc.RefusalSoft
	s.sc.ThumbsDown += o.sc.ThumbsDown
	s.sc.LowConfidence += o.sc.LowConfidence
	if !o.first.IsZero() && (s.first.IsZero() || o.first.Before(s.first)) {
		s.first = o.first
	}
	if o.last.After(s.last) {
		s.last = o.last
	}
	for _, p := range o.policies {
		s.addPolicy(p)
	}
	s.queries = append(s.queries, o.queries...)
	s.distinct += o.distinct
	if s.emb == nil {
		s.emb = o.emb
	}
	s.embedded += o.embedded
	s.plain += o.plain
	for d, n := range o.docs {
		if s.docs == nil {
			s.docs = map[string]int{}
		}
		s.docs[d] += n
	}
	for _, ns := range o.samples {
		s.sample(ns.name).merge(ns.r)
	}
	if s.best == nil {
		s.best = o.best
	} else {
		s.best.merge(o.best)
	}
	for b, n := range o.hist {
		if s.hist == nil {
			s.hist = map[int64]int32{}
		}
		s.hist[b] += n
	}
}

// trim folds repeated wordings, keeps the most asked ones and the most
// frequent doc ids.
func (s *sketch) trim() {
	sort.SliceStable(s.queries, func(i, j int) bool { return s.queries[i].key < s.queries[j].key })
	k := 0
	for i, q := range s.queries {
		if i > 0 && q.key == s.queries[k-1].key {
			s.queries[k-1].n += q.n
			s.distinct-- // counted twice: once per side
			continue
		}
		s.queries[k] = q
		k++
	}
	s.queries = s.queries[:k]
	sort.SliceStable(s.queries, func(i, j int) bool {
		if s.queries[i].n != s.queries[j].n {
			return s.queries[i].n > s.queries[j].n
		}
		return s.queries[i].key < s.queries[j].key
	})
	if len(s.queries) > sketchQueryCap {
		clear(s.queries[sketchQueryCap:])
		s.queries = s.queries[:sketchQueryCap]
	}
	for i := linkWordings; i < len(s.queries); i++ { // only linking wordings keep their sets
		s.queries[i].terms, s.queries[i].grams = nil, nil
	}
	if len(s.docs) > keptDocs {
		top := unitDocsN(s.docs, keptDocs)
		kept := make(map[string]int, len(top))
		for _, d := range top {
			kept[d] = s.docs[d]
		}
		s.docs = kept
	}
}

// rebucket moves the trend counts to a coarser unit.
func (s *sketch) rebucket(unit time.Duration) {
	if len(s.hist) == 0 {
		return
	}
	h := make(map[int64]int32, len(s.hist))
	for b, n := range s.hist {
		h[bucketOf(time.Unix(b, 0), unit)] += n
	}
	s.hist = h
}

func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

// values are the sketch's samples as the diagnosis reads them.
func (s *sketch) values() signalValues {
	sv := signalValues{vals: map[string][]float64{}}
	for _, ns := range s.samples {
		sv.vals[ns.name] = append([]float64(nil), ns.r.vals...)
	}
	if s.best != nil {
		sv.best = append([]float64(nil), s.best.vals...)
	}
	return sv
}
