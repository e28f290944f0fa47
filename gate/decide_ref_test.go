package gate

import (
	"strings"
	"testing"
)

// scanTextRef is prepare's per-chunk work as it was before scanText (commit
// f900ae7): tokenize the text into a slice, then look each token up. (It
// tokenized with that commit's block tokenizer; tokenize gives the same
// tokens, checked against tokenizeRef, so the chain of references holds
// without keeping that tokenizer too.) It is
// the reference scanText must match in counts and in the terms it marks
// (TestScanTextMatchesRef, FuzzScanText).
func (q *queryInfo) scanTextRef(s string, stamp int, hits *termHits, scratch *[]token) (words, chars int) {
	toks, chars := tokenize(s, (*scratch)[:0], nil, nil)
	*scratch = toks
	for _, t := range toks {
		if q.bloom&(1<<(t.hash>>58)) == 0 {
			continue
		}
		j := q.lookup(t.hash)
		if j < 0 || q.seen[j] == stamp {
			continue
		}
		q.seen[j] = stamp
		q.found[j] = true
		if q.terms[j].inQuality {
			hits.qualityHits++
		}
		if q.terms[j].inCoverage {
			hits.coverageHits++
		}
		if q.terms[j].inAnswer {
			hits.answerHits++
		}
	}
	return len(toks), chars
}

// scanQueries are queries for the scan tests: ASCII terms of every length
// around the eight-byte blocks, non-ASCII and CJK terms, stop words.
var scanQueries = []string{
	"",
	"what is the quick brown fox",
	"eightchr sixteencharacter abcdefgh ijklmnop qrstuvwxyz0123456789abcdefghijklmnopq",
	"café naïveté résumé straßenbahnhaltestelle",
	"東京 会社 漢 english",
	"gpt4 co2 photosynthesis light energy",
	"a b c x y z 1 2 3",
}

func checkScanText(t *testing.T, e *Engine, query, s string) termHits {
	t.Helper()
	e.analyseQuery(query)
	q := &e.q
	var got, want termHits
	words, chars := q.scanText(s, 1, &got)
	found := append([]bool(nil), q.found...)
	q.found = zeroed(q.found, len(q.terms))
	q.seen = zeroed(q.seen, len(q.terms))
	wordsRef, charsRef := q.scanTextRef(s, 1, &want, new([]token))
	if words != wordsRef || chars != charsRef || got != want {
		t.Fatalf("query %q text %q: words %d chars %d hits %+v, reference %d %d %+v",
			query, s, words, chars, got, wordsRef, charsRef, want)
	}
	for j := range found {
		if found[j] != q.found[j] {
			t.Fatalf("query %q text %q: term %d found %v, reference %v", query, s, j, found[j], q.found[j])
		}
	}
	return got
}

// scanText counts and finds exactly what tokenizing and looking up each
// token did, for every query against every text at every alignment in a sixteen-byte step,
// and for each query's own words as a text (so that every term is found).
func TestScanTextMatchesRef(t *testing.T) {
	e, err := NewEngine(nil)
	if err != nil {
		t.Fatal(err)
	}
	texts := append(append([]string(nil), tokenCases...), scanQueries...)
	texts = append(texts, strings.ToUpper(strings.Join(scanQueries, ". ")))
	var total termHits
	for _, query := range scanQueries {
		for _, s := range texts {
			for k := 0; k <= 16; k++ {
				h := checkScanText(t, e, query, strings.Repeat(" ", k)+s)
				total.qualityHits += h.qualityHits
				total.coverageHits += h.coverageHits
				total.answerHits += h.answerHits
			}
		}
	}
	// The cases must exercise the lookups, not only agree on zero.
	if total.qualityHits == 0 || total.coverageHits == 0 || total.answerHits == 0 {
		t.Fatalf("no query term found in any text: %+v", total)
	}
}

func FuzzScanText(f *testing.F) {
	for i, s := range tokenCases {
		f.Add(scanQueries[i%len(scanQueries)], s)
	}
	e, err := NewEngine(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, query, s string) { checkScanText(t, e, query, s) })
}
