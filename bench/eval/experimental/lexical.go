// Package experimental holds candidate gate signals as plain functions over
// (query, passages, scores), measured on the tuning halves before any of
// them is proposed for the core (see ../PROPOSAL.md). Every function here
// reads only what one gate request holds.
package experimental

import (
	"math"
	"strings"

	"github.com/ctxgate/ctxgate/bench/eval"
)

// Passage is one chunk as the signals see it.
type Passage struct {
	Text          string
	Vector, BM25  float64
	HasVec, HasBM bool
}

// tokenPos are the passage tokens with the sentence each belongs to.
type tokenized struct {
	toks []string
	sent []int // sentence index per token
}

// tokenize splits text into tokens and records sentence boundaries at '.',
// '?', '!' and newlines (ClapNQ's text is pre-tokenized with spaced
// punctuation, DL19's is not; both split the same way here).
func tokenize(text string) tokenized {
	var t tokenized
	s := 0
	start := -1
	lower := strings.ToLower(text)
	flush := func(i int) {
		if start >= 0 {
			t.toks = append(t.toks, lower[start:i])
			t.sent = append(t.sent, s)
			start = -1
		}
	}
	for i, r := range lower {
		word := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r >= 0x80
		switch {
		case word:
			if start < 0 {
				start = i
			}
		case r == '.' || r == '?' || r == '!' || r == '\n':
			flush(i)
			// "3.5" and "U.S." stay in one sentence: a period between
			// two word characters is not a boundary.
			if !(r == '.' && i+1 < len(lower) && isWordByte(lower[i+1]) && i > 0 && isWordByte(lower[i-1])) {
				s++
			}
		default:
			flush(i)
		}
	}
	flush(len(lower))
	return t
}

func isWordByte(b byte) bool { return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b >= 0x80 }

// Coverage is eval's baseline: the fraction of query terms in the text.
func Coverage(query, text string) float64 { return eval.Coverage(eval.QueryTerms(query), text) }

// IDF is a term-weight table: weight of a term, and the weight of a term the
// table does not know (rare, so the highest).
type IDF struct {
	W       map[string]float64
	Unknown float64
}

// Weight returns the idf of a term.
func (f *IDF) Weight(t string) float64 {
	if f == nil {
		return 1
	}
	if w, ok := f.W[t]; ok {
		return w
	}
	return f.Unknown
}

// BuildIDF makes a static table from a passage collection:
// idf = ln((N+1)/(df+0.5)), keeping only the top most frequent terms (the
// ones a small table shipped in a policy can hold); every other term gets
// the idf of a term seen once... capped at the collection's df=1 value.
func BuildIDF(passages []string, top int) *IDF {
	df := map[string]int{}
	for _, p := range passages {
		seen := map[string]bool{}
		for _, t := range eval.Tokens(p) {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	n := float64(len(passages))
	type kv struct {
		t string
		d int
	}
	var all []kv
	for t, d := range df {
		all = append(all, kv{t, d})
	}
	sortKV(all, func(a, b kv) bool {
		if a.d != b.d {
			return a.d > b.d
		}
		return a.t < b.t
	})
	f := &IDF{W: map[string]float64{}}
	for i := 0; i < len(all) && i < top; i++ {
		f.W[all[i].t] = math.Log((n + 1) / (float64(all[i].d) + 0.5))
	}
	// A term outside the table is at most as frequent as the last one in it.
	last := 1.0
	if len(all) > 0 {
		i := top - 1
		if i >= len(all) {
			i = len(all) - 1
		}
		last = float64(all[i].d)
	}
	f.Unknown = math.Log((n + 1) / (last + 0.5))
	return f
}

// IDFCoverage is query-term coverage with each term weighted by idf: the
// share of the query's information the text contains.
func IDFCoverage(query, text string, idf *IDF) float64 {
	terms := eval.QueryTerms(query)
	if len(terms) == 0 {
		return 1
	}
	set := map[string]bool{}
	for _, t := range eval.Tokens(text) {
		set[t] = true
	}
	var got, all float64
	for _, t := range terms {
		w := idf.Weight(t)
		all += w
		if set[t] {
			got += w
		}
	}
	if all == 0 {
		return 0
	}
	return got / all
}

// LengthCoverage weights each query term by min(len, 10) bytes: a table-free
// stand-in for idf (long words are rarer).
func LengthCoverage(query, text string) float64 {
	terms := eval.QueryTerms(query)
	if len(terms) == 0 {
		return 1
	}
	set := map[string]bool{}
	for _, t := range eval.Tokens(text) {
		set[t] = true
	}
	var got, all float64
	for _, t := range terms {
		w := math.Min(float64(len(t)), 10)
		all += w
		if set[t] {
			got += w
		}
	}
	return got / all
}

// BestSentence is the highest query-term coverage of any one sentence, and
// that sentence's index.
func BestSentence(query, text string) (float64, int) {
	terms := eval.QueryTerms(query)
	tk := tokenize(text)
	if len(terms) == 0 || len(tk.toks) == 0 {
		return 0, -1
	}
	idx := map[string]int{}
	for i, t := range terms {
		idx[t] = i
	}
	best, bestS := 0, -1
	seen := make([]int, len(terms)) // sentence+1 in which the term was last seen
	cnt, cur := 0, -1
	for i, t := range tk.toks {
		if tk.sent[i] != cur {
			cur, cnt = tk.sent[i], 0
		}
		if j, ok := idx[t]; ok && seen[j] != cur+1 {
			seen[j] = cur + 1
			cnt++
			if cnt > best {
				best, bestS = cnt, cur
			}
		}
	}
	return float64(best) / float64(len(terms)), bestS
}

// WindowCoverage is the highest share of distinct query terms inside any
// window of w consecutive tokens: a proximity signal.
func WindowCoverage(query, text string, w int) float64 {
	terms := eval.QueryTerms(query)
	toks := eval.Tokens(text)
	if len(terms) == 0 || len(toks) == 0 {
		return 0
	}
	idx := map[string]int{}
	for i, t := range terms {
		idx[t] = i
	}
	in := make([]int, len(terms))
	distinct, best := 0, 0
	for i, t := range toks {
		if j, ok := idx[t]; ok {
			if in[j] == 0 {
				distinct++
			}
			in[j]++
		}
		if i >= w {
			if j, ok := idx[toks[i-w]]; ok {
				in[j]--
				if in[j] == 0 {
					distinct--
				}
			}
		}
		if distinct > best {
			best = distinct
		}
	}
	return float64(best) / float64(len(terms))
}

// BigramCoverage is the share of adjacent query-term pairs (after stop-word
// removal, in query order) that occur within two tokens of each other, in
// either order, in the text. NaN when the query has fewer than two terms.
func BigramCoverage(query, text string) float64 {
	var qt []string
	for _, t := range eval.Tokens(query) {
		if len(t) >= 3 && !eval.StopWords[t] {
			qt = append(qt, t)
		}
	}
	if len(qt) < 2 {
		return math.NaN()
	}
	toks := eval.Tokens(text)
	pairs := map[[2]string]bool{}
	for i := range toks {
		for d := 1; d <= 2 && i+d < len(toks); d++ {
			pairs[[2]string{toks[i], toks[i+d]}] = true
			pairs[[2]string{toks[i+d], toks[i]}] = true
		}
	}
	n := 0
	for i := 0; i+1 < len(qt); i++ {
		if pairs[[2]string{qt[i], qt[i+1]}] {
			n++
		}
	}
	return float64(n) / float64(len(qt)-1)
}

// TokenCount is the number of tokens of the text.
func TokenCount(text string) float64 { return float64(len(eval.Tokens(text))) }

// AnswerType classifies a question by its wh-phrase.
func AnswerType(query string) string {
	t := eval.Tokens(query)
	for i, w := range t {
		next := ""
		if i+1 < len(t) {
			next = t[i+1]
		}
		switch w {
		case "when":
			return "date"
		case "who", "whom", "whose":
			return "person"
		case "where":
			return "place"
		case "how":
			switch next {
			case "many", "much", "long", "old", "far", "tall", "big", "often", "fast", "high", "large":
				return "number"
			}
		case "what", "which":
			switch next {
			case "year", "date", "day", "month", "century", "time":
				return "date"
			}
		}
	}
	return ""
}

var months = map[string]bool{"january": true, "february": true, "march": true, "april": true, "may": true, "june": true,
	"july": true, "august": true, "september": true, "october": true, "november": true, "december": true, "century": true}

var numberWords = map[string]bool{"one": true, "two": true, "three": true, "four": true, "five": true, "six": true, "seven": true,
	"eight": true, "nine": true, "ten": true, "eleven": true, "twelve": true, "twenty": true, "hundred": true, "thousand": true,
	"million": true, "billion": true, "dozen": true, "first": true, "second": true, "third": true}

// AnswerCue is 1 when the question's answer type (date, number, person,
// place) has a candidate in the text's best-covered sentence that is not a
// query word, 0 when it has none, and 0.5 when the question type is
// unknown. Person and place use capitalised words, so it needs the text's
// original case.
func AnswerCue(query, text string) float64 {
	typ := AnswerType(query)
	if typ == "" {
		return 0.5
	}
	_, bs := BestSentence(query, text)
	qset := map[string]bool{}
	for _, t := range eval.Tokens(query) {
		qset[t] = true
	}
	// Walk the original-case tokens of the best sentence.
	tk := tokenize(text)
	orig := originalTokens(text)
	if len(orig) != len(tk.toks) {
		return 0.5
	}
	for i, t := range tk.toks {
		if tk.sent[i] != bs || qset[t] {
			continue
		}
		switch typ {
		case "date":
			if months[t] || isYear(t) {
				return 1
			}
		case "number":
			if numberWords[t] || t[0] >= '0' && t[0] <= '9' {
				return 1
			}
		case "person", "place":
			c := orig[i][0]
			if c >= 'A' && c <= 'Z' && i > 0 && tk.sent[i-1] == bs && !eval.StopWords[t] {
				return 1
			}
		}
	}
	return 0
}

func isYear(t string) bool {
	if len(t) < 3 || len(t) > 4 {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

func originalTokens(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		word := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r >= 0x80
		if word && start < 0 {
			start = i
		} else if !word && start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}
