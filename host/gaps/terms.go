package gaps

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
)

// normQuery is the exact-match key of a query: lower case, whitespace
// collapsed, surrounding space and trailing punctuation removed. Two events
// with the same key asked the same question and always share a cluster.
func normQuery(q string) string {
	var b strings.Builder
	b.Grow(len(q))
	space := false
	for _, r := range strings.TrimSpace(q) {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(unicode.ToLower(r))
	}
	return strings.TrimRight(b.String(), " ?!.")
}

// queryTerms returns the sorted, distinct content terms of a query: lower
// case, split on anything that is not a letter or digit, stop words dropped,
// lightly stemmed. This is the set the lexical path compares with Jaccard.
func queryTerms(q string) []string {
	if maskedQuery(q) {
		return []string{q}
	}
	var terms []string
	eachWord(strings.ToLower(q), func(w string) {
		if stopWords[w] {
			return
		}
		w = stem(w)
		if w == "" || stopWords[w] {
			return
		}
		terms = append(terms, w)
	})
	return sortedSet(terms)
}

// maskPrefix and maskTokenLen describe a query the server masked under
// decision_log_mask (host/server/gaplog_mask.go): "masked:" and 12
// base64url characters of an HMAC of the question.
const (
	maskPrefix   = "masked:"
	maskTokenLen = 12
)

// maskedQuery reports whether q is a masked question. Its characters are a
// keyed hash, not words: it is one opaque term, with no character grams,
// so that two masked questions never look alike through the shared prefix
// or a chance run of letters. Repeats of one question still share a token,
// and so a gap.
func maskedQuery(q string) bool {
	tok, ok := strings.CutPrefix(q, maskPrefix)
	if !ok || len(tok) != maskTokenLen {
		return false
	}
	for _, r := range tok {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// sortedSet sorts xs and drops repeats, in place.
func sortedSet[T cmp.Ordered](xs []T) []T {
	slices.Sort(xs)
	return slices.Compact(xs)
}

// eachWord calls fn with each run of letters and digits of s, in order:
// the words both the term and the character paths read.
func eachWord(s string, fn func(w string)) {
	start := -1
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			fn(s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		fn(s[start:])
	}
}

// stem is a light, Porter-step-1 style suffix stripper: plurals, -ing and -ed,
// a final e. It only needs to make "resetting passwords" and "reset password"
// meet; it is not a linguistic stemmer, and it never touches words of three
// letters or fewer (api, sso, vpn) or anything containing a digit (http2, v1).
func stem(w string) string {
	if len(w) <= 3 || strings.IndexFunc(w, unicode.IsDigit) >= 0 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	if strings.HasSuffix(w, "ied") && len(w) > 4 { // retried -> retry, like -ies
		return w[:len(w)-3] + "y"
	}
	for _, suf := range []string{"ing", "ed"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 && hasVowel(w[:len(w)-len(suf)]) {
			w = w[:len(w)-len(suf)]
			// "resetting" -> "resett" -> "reset"; but keep "ll", "ss", "zz".
			if n := len(w); n >= 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
				w = w[:n-1]
			}
			break
		}
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

func hasVowel(s string) bool { return strings.ContainsAny(s, "aeiouy") }

// stopWords are function words and question scaffolding that say nothing
// about what is missing from the knowledge base. It is the section-quality stop list minus
// its WikiGR-specific words (article, graph, knowledge, related,
// relationship: content words in a support backlog), plus contraction
// fragments and the scaffolding of help-desk questions ("is there a way to",
// "I need to", "please"): words that would otherwise make two wordings of one
// question look different.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about after all an and any are as at be been before being between
both but by can could describe did do does each either explain few find for from had has have he
her him his how i if in into is it its may me might more most my neither no nor not of on or other
our out shall she should so some such tell than that the their them then these they this those
through to up us was we were what when where which who whom why will with would yet you your
s t d ll m re ve don doesn didn isn aren wasn cannot won please hi hello thanks thank
there here way want need know just also still anyone someone something anything many much`) {
		m[w] = true
	}
	return m
}()
