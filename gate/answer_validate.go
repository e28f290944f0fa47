package gate

import "github.com/ctxgate/ctxgate/gate/jsonx"

// appendCheck appends AppendValidation(dst, e.check(a)), written straight
// from the answer walk's offsets without making the strings a Validation
// holds. For a large answer those are most of check's cost, and under TinyGo
// a copy of every uncited sentence (megabytes, in blocks) is memory the
// collector has to find room for and mark. Validate and AppendValidateInPlace use it.
func (e *Engine) appendCheck(dst []byte, a *Answer) []byte {
	line := e.policy.Messages.RefusalLine
	soft := isSoftRefusal(a.Answer, line)
	sc := answerScan{s: a.Answer, line: line, tags: a.Tags}
	sc.run()
	var gap *GapEvent
	n := 160 + spansSize(sc.unknown)
	for _, t := range sc.cited {
		n += len(a.Tags[t]) + 3
	}
	if soft {
		gap = &GapEvent{Kind: "refusal_soft", Query: a.Query}
		n += 256 + len(a.Query)
	} else {
		n += spansSize(sc.uncited)
	}
	if cap(dst)-len(dst) < n {
		dst = append(make([]byte, 0, len(dst)+n), dst...)
	}
	dst = append(dst, `{"soft_refusal":`...)
	if soft {
		dst = append(dst, "true"...)
	} else {
		dst = append(dst, "false"...)
	}
	dst = append(dst, `,"cited":[`...)
	for i, t := range sc.cited {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendString(dst, a.Tags[t])
	}
	dst = append(dst, `],"unknown":`...)
	dst = appendSpans(dst, a.Answer, sc.unknown)
	dst = append(dst, `,"uncited_sentences":`...)
	if soft {
		dst = append(dst, "[]"...)
	} else {
		dst = appendSpans(dst, a.Answer, sc.uncited)
	}
	dst = append(dst, `,"gap_event":`...)
	dst = AppendGapEvent(dst, gap)
	return append(dst, '}')
}

// appendSpans appends [s[at[0]:at[1]], s[at[2]:at[3]], ...] as JSON strings.
func appendSpans(dst []byte, s string, at []int) []byte {
	dst = append(dst, '[')
	for i := 0; i+1 < len(at); i += 2 {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendString(dst, s[at[i]:at[i+1]])
	}
	return append(dst, ']')
}

// spansSize is appendSpans' output size when nothing needs escaping.
func spansSize(at []int) int {
	n := 2
	for i := 0; i+1 < len(at); i += 2 {
		n += at[i+1] - at[i] + 3
	}
	return n
}
