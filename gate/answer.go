package gate

import "strings"

// Answer validation after generation (seed 003): the soft refusal, the tags
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
	offered := func(tag string) bool {
		for _, t := range a.Tags {
			if t == tag {
				return true
			}
		}
		return false
	}
	s := a.Answer
	sentStart := 0
	sentCited := false
	endSentence := func(end int) {
		sent := strings.TrimSpace(s[sentStart:end])
		if !sentCited && hasWordRune(sent) && !isSoftRefusal(sent, line) {
			v.UncitedSentences = append(v.UncitedSentences, sent)
		}
		sentStart, sentCited = end, false
	}
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '[':
			tags, end := parseCitation(s, i)
			if end < 0 {
				continue
			}
			for _, tag := range tags {
				if offered(tag) {
					v.Cited = appendUnique(v.Cited, tag)
				} else {
					v.Unknown = appendUnique(v.Unknown, tag)
				}
			}
			sentCited = true
			i = end - 1
		case ch == '\n':
			endSentence(i + 1)
		case ch == '.' || ch == '!' || ch == '?':
			// A terminator ends a sentence only before whitespace, a
			// citation or the end ("3.5" and "e.g" stay whole). Citations
			// right after the terminator belong to this sentence.
			j := i + 1
			for j < len(s) && (s[j] == '.' || s[j] == '!' || s[j] == '?' || s[j] == '"' || s[j] == ')') {
				j++
			}
			if j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '\n' && s[j] != '\r' && s[j] != '[' {
				continue
			}
			k := j
			for {
				m := k
				for m < len(s) && (s[m] == ' ' || s[m] == '\t') {
					m++
				}
				if m < len(s) && s[m] == '[' {
					tags, end := parseCitation(s, m)
					if end > 0 {
						for _, tag := range tags {
							if offered(tag) {
								v.Cited = appendUnique(v.Cited, tag)
							} else {
								v.Unknown = appendUnique(v.Unknown, tag)
							}
						}
						sentCited = true
						k = end
						continue
					}
				}
				break
			}
			endSentence(k)
			i = k - 1
		}
	}
	endSentence(len(s))
	if v.SoftRefusal {
		v.UncitedSentences = nil
		v.GapEvent = &GapEvent{Kind: "refusal_soft", Query: a.Query}
	}
	return v
}

// parseCitation parses "[S1]", "[S1, S2]" or "[S1,S2]" at s[i] == '['. It
// returns the tags and the index after ']', or end -1 when s[i:] is not a
// citation.
func parseCitation(s string, i int) (tags []string, end int) {
	j := i + 1
	for {
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if j >= len(s) || s[j] != 'S' {
			return nil, -1
		}
		k := j + 1
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k == j+1 || k-j > 7 {
			return nil, -1
		}
		tags = append(tags, s[j:k])
		for k < len(s) && s[k] == ' ' {
			k++
		}
		if k < len(s) && s[k] == ']' {
			return tags, k + 1
		}
		if k < len(s) && s[k] == ',' {
			j = k + 1
			continue
		}
		return nil, -1
	}
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func hasWordRune(s string) bool {
	for _, r := range s {
		if isWordRune(r) || isCJK(r) {
			return true
		}
	}
	return false
}
