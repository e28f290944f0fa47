package gate

import "strings"

// Answer validation after generation (the support-agent article): the soft refusal, the tags
// the answer cites, tags it invents, and factual sentences with no tag.

// quotes that may surround a refusal line when a model echoes it quoted.
const quoteChars = "\"'`“”‘’«»"

// isSoftRefusal reports whether the answer is exactly the refusal line,
// after trimming whitespace and any surrounding quote characters.
func isSoftRefusal(answer, line string) bool {
	a := strings.TrimSpace(answer)
	a = strings.TrimSpace(strings.Trim(a, quoteChars))
	return a != "" && a == strings.TrimSpace(line)
}

func (e *Engine) check(a *Answer) *Validation {
	v := &Validation{}
	line := e.policy.Messages.RefusalLine
	v.SoftRefusal = isSoftRefusal(a.Answer, line)
	sc := answerScan{s: a.Answer, line: line, tags: a.Tags}
	sc.run()
	if len(sc.cited) > 0 {
		v.Cited = make([]string, len(sc.cited))
		for i, t := range sc.cited {
			v.Cited[i] = a.Tags[t]
		}
	}
	var b strBlocks
	v.Unknown = b.spans(a.Answer, sc.unknown)
	if v.SoftRefusal {
		v.GapEvent = &GapEvent{Kind: "refusal_soft", Query: a.Query}
	} else {
		v.UncitedSentences = b.spans(a.Answer, sc.uncited)
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
