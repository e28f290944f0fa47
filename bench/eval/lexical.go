package eval

import "strings"

// stopList is the section-quality list's 105 stop words plus the words of
// the coverage list that it lacks. The baselines use one list so that their
// numbers differ only by the signal, not by the tokenizer.
const stopList = `a about after all an and any are article articles as at be been before being between both but by
can could describe did do does each either explain few find for from graph had has have he her him
his how i if in into is it its knowledge may me might more most my neither no nor not of on or other
our out related relationship shall she should so some such tell than that the their them then these
they this those through to up us was we were what when where which who whom why will with would yet
you your one`

// StopWords is the stop-word set used by the lexical signals.
var StopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(stopList) {
		m[w] = true
	}
	return m
}()

// Tokens lower-cases s and splits it into runs of letters and digits (ASCII
// and any non-ASCII rune). Unlike the WikiGR code's whitespace split, punctuation
// never sticks to a word, so "photosynthesis?" matches "photosynthesis".
func Tokens(s string) []string {
	var out []string
	start := -1
	s = strings.ToLower(s)
	for i, r := range s {
		word := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r >= 0x80
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

// QueryTerms are the distinct query tokens of 3 or more bytes that are not
// stop words, in first-seen order (sufficiency coverage's term rule, minus its substring
// accident).
func QueryTerms(q string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range Tokens(q) {
		if len(t) < 3 || StopWords[t] || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}

// Coverage is the fraction of query terms that occur as whole tokens in
// text. With no query term it is 1 (nothing is missing), as in sufficiency coverage.
func Coverage(terms []string, text string) float64 {
	if len(terms) == 0 {
		return 1
	}
	set := map[string]bool{}
	for _, t := range Tokens(text) {
		set[t] = true
	}
	n := 0
	for _, t := range terms {
		if set[t] {
			n++
		}
	}
	return float64(n) / float64(len(terms))
}

// MaxCoverage is the baseline lexical signal: the best query-term coverage
// of any one chunk (title and text).
func MaxCoverage(query string, texts []string) float64 {
	terms := QueryTerms(query)
	best := 0.0
	for _, t := range texts {
		if c := Coverage(terms, t); c > best {
			best = c
		}
	}
	return best
}
