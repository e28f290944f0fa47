package gaps

import (
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// Synthetic event sets with known structure, for tests and benchmarks.

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func unitVec(r *rand.Rand, dim int) []float64 {
	v := make([]float64, dim)
	var ss float64
	for i := range v {
		v[i] = r.NormFloat64()
		ss += v[i] * v[i]
	}
	inv := 1 / math.Sqrt(ss)
	for i := range v {
		v[i] *= inv
	}
	return v
}

// around returns a unit vector whose expected cosine to the unit vector c is
// cos: c plus isotropic noise of the right size. Two such vectors have an
// expected cosine of about cos².
func around(r *rand.Rand, c []float64, cos float64) []float64 {
	sigma := math.Sqrt((1/(cos*cos) - 1) / float64(len(c)))
	v := make([]float64, len(c))
	var ss float64
	for i := range v {
		v[i] = c[i] + sigma*r.NormFloat64()
		ss += v[i] * v[i]
	}
	inv := 1 / math.Sqrt(ss)
	for i := range v {
		v[i] *= inv
	}
	return v
}

// embedSpec describes a synthetic embedded event set.
type embedSpec struct {
	dim        int
	sizes      []int   // cluster sizes (events)
	singletons int     // unrelated one-off queries
	memberCos  float64 // each member's cosine to its cluster centre
	// anisotropy in [0,1): share of a common direction mixed into every
	// centre, like real sentence embeddings whose unrelated pairs sit at
	// cosine 0.2-0.4 rather than 0.
	anisotropy float64
	seed       uint64
}

// synthEmbedded returns events and, for each, its true cluster label (the
// singleton labels follow the cluster labels).
func synthEmbedded(s embedSpec) ([]Event, []int) {
	r := rand.New(rand.NewPCG(s.seed, 0xC0FFEE))
	common := unitVec(r, s.dim)
	centre := func() []float64 {
		c := unitVec(r, s.dim)
		if s.anisotropy > 0 {
			var ss float64
			for i := range c {
				c[i] = (1-s.anisotropy)*c[i] + s.anisotropy*common[i]
				ss += c[i] * c[i]
			}
			inv := 1 / math.Sqrt(ss)
			for i := range c {
				c[i] *= inv
			}
		}
		return c
	}
	var evs []Event
	var labels []int
	for k, n := range s.sizes {
		c := centre()
		for m := 0; m < n; m++ {
			evs = append(evs, Event{Kind: KindRefusalHard, Query: "topic " + strconv.Itoa(k) + " wording " + strconv.Itoa(m),
				QueryEmbedding: around(r, c, s.memberCos), Time: t0.Add(time.Duration(len(evs)) * time.Minute), HasTime: true})
			labels = append(labels, k)
		}
	}
	for i := 0; i < s.singletons; i++ {
		evs = append(evs, Event{Kind: KindLowConfidence, Query: "one-off question " + strconv.Itoa(i),
			QueryEmbedding: centre(), Time: t0.Add(time.Duration(len(evs)) * time.Minute), HasTime: true})
		labels = append(labels, len(s.sizes)+i)
	}
	// Interleave so clusters are not contiguous in the file.
	r.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i]; labels[i], labels[j] = labels[j], labels[i] })
	return evs, labels
}

// Lexical synthesis: each topic is a few content words; each wording of it
// wraps most of them in question scaffolding, inflected.
var scaffolds = []string{
	"How do I %s?", "how can i %s", "Where can I %s", "what is the way to %s", "I need to %s, please",
	"Is there a way to %s?", "help: %s", "%s", "can you tell me how to %s", "why can't I %s",
}

func inflect(r *rand.Rand, w string) string {
	switch r.IntN(4) {
	case 0:
		return w + "s"
	case 1:
		return w + "ing"
	}
	return w
}

// syntheticWord returns distinct pronounceable words, different in their
// letters and not only in one of them: the character path rightly joins
// "fax" and "cax" (a typo's distance), so synthetic topics must not be
// spelled that close. Words are letters only and end in "r", so that the
// stemmer undoes the inflections synthLexical adds ("-s", "-ing"), as it
// does for real words; a digit would make it leave them alone.
func syntheticWord(i int) string {
	const cons, vows = "bcdfghjklmnpqrstvwz", "aeiou"
	h := splitmix64(uint64(i) * 0x9e3779b97f4a7c15)
	x := h.next()
	var b []byte
	for k := 0; k < 3; k++ {
		b = append(b, cons[x%19], vows[(x/19)%5])
		x /= 19 * 5
	}
	for n := i; ; n /= 19 * 5 { // the index keeps words distinct
		b = append(b, cons[n%19], vows[(n/19)%5])
		if n < 19*5 {
			break
		}
	}
	return string(b) + "r"
}

// synthLexical makes events without embeddings: sizes[k] events on topic k,
// each topic topicWords distinct words (shared words between topics are
// avoided so the true clusters are exactly the topics), plus singletons.
func synthLexical(sizes []int, singletons int, seed uint64) ([]Event, []int) {
	r := rand.New(rand.NewPCG(seed, 0xBEEF))
	word := syntheticWord
	next := 0
	var evs []Event
	var labels []int
	emit := func(terms []string, label int, kind string) {
		ws := make([]string, len(terms))
		copy(ws, terms)
		r.Shuffle(len(ws), func(i, j int) { ws[i], ws[j] = ws[j], ws[i] })
		for i := range ws {
			ws[i] = inflect(r, ws[i])
		}
		s := scaffolds[r.IntN(len(scaffolds))]
		q := ""
		for i := 0; i < len(s); i++ {
			if s[i] == '%' && i+1 < len(s) && s[i+1] == 's' {
				for j, w := range ws {
					if j > 0 {
						q += " the "
					}
					q += w
				}
				i++
				continue
			}
			q += string(s[i])
		}
		evs = append(evs, Event{Kind: kind, Query: q, Time: t0.Add(time.Duration(len(evs)) * time.Second), HasTime: true})
		labels = append(labels, label)
	}
	for k, n := range sizes {
		topic := []string{word(next), word(next + 1), word(next + 2), word(next + 3)}
		next += 4
		for m := 0; m < n; m++ {
			// Drop at most one word: Jaccard to the full set is then 0.75, and
			// two different drops still meet through the full set.
			ws := topic
			if m > 0 && r.IntN(3) == 0 {
				d := r.IntN(4)
				ws = append(append([]string{}, topic[:d]...), topic[d+1:]...)
			}
			if m == 0 {
				ws = topic
			}
			emit(ws, k, KindRefusalSoft)
		}
	}
	for i := 0; i < singletons; i++ {
		emit([]string{word(next), word(next + 1), word(next + 2)}, len(sizes)+i, KindThumbsDown)
		next += 3
	}
	r.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i]; labels[i], labels[j] = labels[j], labels[i] })
	return evs, labels
}

// partitionOf maps each event to the index of its cluster in rep.
func partitionOf(rep *Report, n int) []int {
	p := make([]int, n)
	for ci, c := range rep.Clusters {
		for _, e := range c.Events {
			p[e] = ci
		}
	}
	return p
}

// samePartition reports whether two labelings group events identically.
func samePartition(a, b []int) bool {
	ab, ba := map[int]int{}, map[int]int{}
	for i := range a {
		if x, ok := ab[a[i]]; ok && x != b[i] {
			return false
		}
		if y, ok := ba[b[i]]; ok && y != a[i] {
			return false
		}
		ab[a[i]], ba[b[i]] = b[i], a[i]
	}
	return true
}

func timeHours(h int) time.Duration { return time.Duration(h) * time.Hour }
