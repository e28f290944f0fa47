package gate

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Answer validation after generation (the support-agent article): the soft refusal, the tags
// the answer cites, tags it invents, and factual sentences with no tag.

// isSoftRefusal reports whether the answer is the refusal line, as a model
// writes it back: whitespace and quote characters around it, and a final
// full stop (or '!', '…'), are ignored; letters compare case-folded; a
// typographic apostrophe or quote is the ASCII one; and any run of white
// space (no-break spaces, line breaks, ideographic spaces included) is one
// space. Models echo the line with all of these changes, and each made the
// check miss a refusal. Nothing is allocated: the two strings are walked
// rune by rune (refusalRunes).
func isSoftRefusal(answer, line string) bool {
	a, l := refusalRunes{s: trimRefusal(answer)}, refusalRunes{s: trimRefusal(line)}
	if a.s == "" {
		return false
	}
	for {
		x, y := a.next(), l.next()
		if x != y {
			return false
		}
		if x < 0 {
			return true
		}
	}
}

// refusalLen is the number of runes isSoftRefusal compares for line: no
// string of fewer bytes can be that line.
func refusalLen(line string) int {
	w := refusalRunes{s: trimRefusal(line)}
	n := 0
	for w.next() >= 0 {
		n++
	}
	return n
}

// trimRefusal drops what isSoftRefusal ignores at the ends: white space,
// quote characters and, at the end, the final terminal punctuation.
func trimRefusal(s string) string {
	for {
		n := len(s)
		s = strings.TrimFunc(s, func(r rune) bool { return refusalSpace(r) || isQuoteRune(r) })
		s = strings.TrimRight(s, ".!…")
		if len(s) == n {
			return s
		}
	}
}

// quoteChars may surround a refusal line when a model echoes it quoted.
const quoteChars = "\"'`“”‘’«»„‚‹›"

func isQuoteRune(r rune) bool { return strings.ContainsRune(quoteChars, r) }

// refusalSpace is white space for the refusal comparison: Unicode's, and
// the zero-width characters models and editors leave in text.
func refusalSpace(r rune) bool {
	return unicode.IsSpace(r) || r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\u2060' || r == '\ufeff'
}

// refusalRunes walks a trimmed string as isSoftRefusal compares it: runes
// folded (foldRefusalRune), runs of white space as one ' ', -1 at the end.
type refusalRunes struct {
	s string
	i int
}

func (w *refusalRunes) next() rune {
	if w.i >= len(w.s) {
		return -1
	}
	r, size := utf8.DecodeRuneInString(w.s[w.i:])
	w.i += size
	if !refusalSpace(r) {
		return foldRefusalRune(r)
	}
	for w.i < len(w.s) {
		r, size := utf8.DecodeRuneInString(w.s[w.i:])
		if !refusalSpace(r) {
			break
		}
		w.i += size
	}
	return ' '
}

// foldRefusalRune lower-cases r and maps typographic apostrophes and
// quotes to ASCII.
func foldRefusalRune(r rune) rune {
	switch r {
	case '’', '‘', 'ʼ', '′', '`':
		return '\''
	case '“', '”', '„', '″':
		return '"'
	}
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(r)
}

func (e *Engine) check(a *Answer) *Validation {
	v := &Validation{}
	line := e.policy.Messages.RefusalLine
	v.SoftRefusal = isSoftRefusal(a.Answer, line)
	sc := newAnswerScan(&e.ans, a.Answer, line, a.Tags)
	sc.run()
	m := &e.ans
	if len(m.cited) > 0 {
		v.Cited = make([]string, len(m.cited))
		for i, t := range m.cited {
			v.Cited[i] = a.Tags[t]
		}
	}
	var b strBlocks
	v.Unknown = b.spans(a.Answer, m.unknown)
	if v.SoftRefusal {
		v.GapEvent = &GapEvent{Kind: "refusal_soft", Query: a.Query}
	} else {
		v.UncitedSentences = b.spans(a.Answer, m.uncited)
	}
	return v
}

func hasWordRune(s string) bool {
	for _, r := range s {
		if isWordRune(r) || isCJK(r) {
			return true
		}
	}
	return false
}

// AnswerSummary is what a proxy reports of an answer check in a few
// headers: whether the answer is the refusal line, the first unknown tags
// it cites, and how many uncited sentences it has.
type AnswerSummary struct {
	SoftRefusal bool
	Unknown     []string // the first unknown tags cited (at most Summarize's n)
	MoreUnknown bool     // it cites more unknown tags than Unknown holds
	Uncited     int      // uncited sentences (0 for a soft refusal)
}

// Summarize is Check for a caller that reports counts (the Envoy filter's
// headers): the same walk, without a string per unknown tag and uncited
// sentence. A megabyte answer of 150,000 unknown tags made Check allocate
// 150,000 strings, which a TinyGo guest then spent seconds collecting.
func (e *Engine) Summarize(a *Answer, n int) AnswerSummary {
	if a == nil {
		return AnswerSummary{}
	}
	line := e.policy.Messages.RefusalLine
	s := AnswerSummary{SoftRefusal: isSoftRefusal(a.Answer, line)}
	sc := newAnswerScan(&e.ans, a.Answer, line, a.Tags)
	sc.run()
	m := &e.ans
	for i := 0; i+1 < len(m.unknown); i += 2 {
		if len(s.Unknown) == n {
			s.MoreUnknown = true
			break
		}
		s.Unknown = append(s.Unknown, strings.Clone(a.Answer[m.unknown[i]:m.unknown[i+1]]))
	}
	if !s.SoftRefusal {
		s.Uncited = len(m.uncited) / 2
	}
	return s
}
