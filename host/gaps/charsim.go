package gaps

import (
	"strings"
)

// Character n-gram similarity sees what term sets miss: inflections the
// light stemmer leaves apart ("scheduler" and "scheduling"), compounds and
// typos ("quickbooks", "quick books", "quikbooks"). A query's wording is its
// content words (stop words out, not stemmed) joined by single spaces and
// padded with one space each side; its grams are the distinct hashes of its
// character 3-grams (runes, so CJK text works too). Two units link when the
// Jaccard similarity of their gram sets is at least Options.Chars (0.5 by
// default; docs/gaps.md says why).
//
// Below exactCharsBelow (512) wordings every pair is compared. Above it,
// MinHash signatures (charHashes values) split into charBands bands of
// charRows rows propose candidates: a pair at Jaccard s shares some band
// with probability 1-(1-s^3)^16, 0.88 at s = 0.5 and 0.999 at s = 0.7, and
// a pair at 0.3, which only costs a check, 0.35. Every
// candidate is verified on its exact gram sets, so a reported link is real;
// a missed borderline pair is usually joined through a third wording. On
// this path only the first wording of each term set is hashed (charUnit).
const (
	gramSize        = 3
	charRows        = 3
	charBands       = 16
	charHashes      = charRows * charBands
	charBucketPeers = 4 // earlier members of a bucket each wording is compared with
)

// exactCharsBelow is a variable so that tests can force the MinHash path.
var exactCharsBelow = 512

// wordingGrams returns the sorted distinct 3-gram hashes of q's content
// words; none for a masked question (maskedQuery).
func wordingGrams(q string) []uint32 {
	if maskedQuery(q) {
		return nil
	}
	rs := make([]rune, 0, len(q)+2)
	rs = append(rs, ' ')
	eachWord(strings.ToLower(q), func(w string) {
		if stopWords[w] {
			return
		}
		if len(rs) > 1 {
			rs = append(rs, ' ')
		}
		rs = append(rs, []rune(w)...)
	})
	if len(rs) == 1 {
		return nil // no content word
	}
	rs = append(rs, ' ')
	out := make([]uint32, 0, len(rs))
	for i := 0; i+gramSize <= len(rs); i++ {
		h := uint32(2166136261) // FNV-1a over the runes
		for _, r := range rs[i : i+gramSize] {
			h = (h ^ uint32(r)) * 16777619
		}
		out = append(out, h)
	}
	return sortedSet(out)
}

// jaccardU32 is the Jaccard similarity of two sorted distinct lists.
func jaccardU32(a, b []uint32) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	o := overlap(a, b)
	return float64(o) / float64(len(a)+len(b)-o)
}

type charStats struct {
	Candidates int // pairs whose gram sets were compared
	Linked     int // pairs at or above the threshold
}

// charUnit is what the character path needs to know about one unit.
type charUnit struct {
	grams   []uint32
	noEmb   bool
	carried bool
	// termKey is the unit's term set joined: on the MinHash path only the
	// first unit of each term set is hashed (the term path joins the rest to
	// it, Jaccard 1), which on a log of many wordings per question divides
	// the work several times over.
	termKey string
}

// linkChars returns the unit pairs whose gram sets are similar enough, as
// edges. As on the term path, a pair where both sides have embeddings is
// left to the cosine.
func linkChars(units []charUnit, t float64) ([]edge, charStats) {
	var st charStats
	var edges []edge
	// Distinct gram sets only: identical wordings are linked by the term
	// path (their term sets are identical too) or are the same unit.
	var ids []int32
	for i := range units {
		if len(units[i].grams) > 0 {
			ids = append(ids, int32(i))
		}
	}
	check := func(a, b int32) bool {
		ua, ub := &units[a], &units[b]
		if (!ua.noEmb && !ub.noEmb) || (ua.carried && ub.carried) {
			return false
		}
		st.Candidates++
		la, lb := len(ua.grams), len(ub.grams)
		// Length filter: Jaccard <= min/max.
		if float64(min(la, lb)) < t*float64(max(la, lb))-1e-9 {
			return false
		}
		o := overlap(ua.grams, ub.grams)
		if float64(o) < t*float64(la+lb-o)-1e-9 {
			return false
		}
		st.Linked++
		edges = append(edges, edge{a: a, b: b, s: float32(o) / float32(la+lb-o), kind: kindChars})
		return true
	}
	if len(ids) < exactCharsBelow {
		for i, a := range ids {
			for _, b := range ids[i+1:] {
				check(a, b)
			}
		}
		return edges, st
	}
	seenTerms := make(map[string]struct{}, len(ids))
	k := 0
	for _, u := range ids {
		if tk := units[u].termKey; tk != "" {
			if _, ok := seenTerms[tk]; ok {
				continue
			}
			seenTerms[tk] = struct{}{}
		}
		ids[k] = u
		k++
	}
	ids = ids[:k]
	// MinHash: hash k of a set is the minimum of a seeded mix of its grams.
	var seeds [charHashes]uint64
	rng := splitmix64(DefaultSeed ^ 0x6368617273) // "chars"
	for k := range seeds {
		seeds[k] = rng.next() | 1
	}
	sigs := make([][charHashes]uint32, len(ids))
	for i, u := range ids {
		var sig [charHashes]uint32
		for k := range sig {
			sig[k] = ^uint32(0)
		}
		for _, g := range units[u].grams {
			for k := range sig {
				h := uint32((uint64(g)*seeds[k] + seeds[k]>>17) >> 32)
				if h < sig[k] {
					sig[k] = h
				}
			}
		}
		sigs[i] = sig
	}
	// A pair meeting in several bands is checked again (cheaper than
	// remembering every pair), but linked once.
	linked := make(map[uint64]struct{})
	buckets := make(map[uint64][]int32, len(ids))
	for band := 0; band < charBands; band++ {
		clear(buckets)
		for i, u := range ids {
			key := uint64(band) * 0x9e3779b97f4a7c15
			for _, h := range sigs[i][band*charRows : (band+1)*charRows] {
				key = (key ^ uint64(h)) * 0x100000001b3
			}
			peers := buckets[key]
			for _, p := range peers {
				if units[p].carried && units[u].carried {
					continue
				}
				pair := uint64(p)<<32 | uint64(u)
				if _, ok := linked[pair]; ok {
					continue
				}
				if check(p, u) {
					linked[pair] = struct{}{}
				}
			}
			if len(peers) < charBucketPeers {
				buckets[key] = append(peers, u)
			}
		}
	}
	return edges, st
}
