package gaps

import (
	"math/rand/v2"
	"testing"
)

func TestWordingGrams(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		min  float64
	}{
		{"goroutine scheduler", "What is goroutine scheduling?", 0.6},
		{"export invoices to QuickBooks", "export invoices to Quick Books", 0.6},
		{"東京の人口", "東京の人口は", 0.5},
	} {
		if j := jaccardU32(wordingGrams(tc.a), wordingGrams(tc.b)); j < tc.min {
			t.Errorf("%q vs %q: %.2f, want >= %.2f", tc.a, tc.b, j, tc.min)
		}
	}
	if g := wordingGrams("what is the"); g != nil {
		t.Errorf("stop words only: %v, want none", g)
	}
	if j := jaccardU32(wordingGrams("cancel order"), wordingGrams("track order")); j >= 0.5 {
		t.Errorf("cancel order vs track order: %.2f, want < 0.5", j)
	}
}

// The MinHash path proposes candidates and verifies each exactly: every
// link it reports is a pair at or above the threshold (precision 1), and it
// finds nearly all of them. 1,000 base wordings each get a near copy (one
// word changed or misspelt) among 1,000 unrelated ones.
func TestCharsMinHashMatchesAllPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	var units []charUnit
	for i := 0; i < 1000; i++ {
		a := syntheticWord(i) + " " + syntheticWord(i+5000) + " " + syntheticWord(i+10000)
		units = append(units, charUnit{grams: wordingGrams(a), noEmb: true})
		b := syntheticWord(i) + " " + syntheticWord(i+5000) + " " + syntheticWord(i + 10000)[:4] + syntheticWord(20000 + r.IntN(1000))[:2]
		units = append(units, charUnit{grams: wordingGrams(b), noEmb: true})
		units = append(units, charUnit{grams: wordingGrams(syntheticWord(30000+i) + " " + syntheticWord(40000+i)), noEmb: true})
	}
	truth := map[[2]int32]bool{}
	for a := range units {
		for b := a + 1; b < len(units); b++ {
			if jaccardU32(units[a].grams, units[b].grams) >= 0.5-1e-9 {
				truth[[2]int32{int32(a), int32(b)}] = true
			}
		}
	}
	if exactCharsBelow > len(units) {
		t.Fatalf("%d wordings would be compared all pairs", len(units))
	}
	edges, st := linkChars(units, 0.5)
	found := 0
	for _, e := range edges {
		if !truth[[2]int32{e.a, e.b}] {
			t.Fatalf("MinHash linked %d and %d at %.3f, under the threshold", e.a, e.b, e.s)
		}
		found++
	}
	recall := float64(found) / float64(len(truth))
	t.Logf("%d true pairs, %d found (recall %.4f), %d candidates", len(truth), found, recall, st.Candidates)
	if len(truth) < 900 || recall < 0.95 {
		t.Errorf("recall %.4f over %d pairs, want >= 0.95", recall, len(truth))
	}
}
