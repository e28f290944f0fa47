package gate

import (
	"strconv"

	"github.com/ctxgate/ctxgate/gate/internal/encode"
	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/gate/wire"
)

// appendCheck appends AppendValidation(dst, e.check(a)), written straight
// from the answer walk's offsets without making the strings a Validation
// holds. For a large answer those are most of check's cost, and under TinyGo
// a copy of every uncited sentence (megabytes, in blocks) is memory the
// collector has to find room for and mark. Validate and AppendValidateInPlace use it.
//
// The validation's size is known before it is written (the walk counts
// its lists' JSON as it goes, and stops once they pass the limit), and one
// over limits.max_decision_bytes is a limit error naming the answer: an
// answer of 4 MiB of distinct unknown tags or of short uncited sentences
// of '<' writes more than it reads.
func (e *Engine) appendCheck(dst []byte, a *Answer) ([]byte, error) {
	line := e.policy.Messages.RefusalLine
	soft := isSoftRefusal(a.Answer, line)
	limit := maxDecisionBytes(&e.policy.Limits)
	sc := newAnswerScan(&e.ans, a.Answer, line, a.Tags)
	sc.limit, sc.uncitedOut = limit, !soft
	sc.run()
	if sc.over {
		return dst, wire.LimitError("answer", "the validation would be over "+strconv.Itoa(limit)+" bytes of JSON", limit, "max_decision_bytes")
	}
	m := &e.ans
	var gap *GapEvent
	if soft {
		gap = &GapEvent{Kind: "refusal_soft", Query: a.Query}
	}
	// The rest of the size: the fixed keys, the cited tags, the lists'
	// brackets, the gap event.
	n := len(`{"soft_refusal":false,"cited":[],"unknown":[],"uncited_sentences":[],"gap_event":}`) + sc.size
	if soft {
		n--
	}
	for i, t := range m.cited {
		n += jsonx.StringLen(a.Tags[t])
		if i > 0 {
			n++
		}
	}
	n += encode.Sizer{Exact: true}.GapEvent(gap)
	if n > limit {
		return dst, outputLimitError("answer", "validation", n, limit)
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
	for i, t := range m.cited {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendString(dst, a.Tags[t])
	}
	dst = append(dst, `],"unknown":`...)
	dst = appendSpans(dst, a.Answer, m.unknown)
	dst = append(dst, `,"uncited_sentences":`...)
	if soft {
		dst = append(dst, "[]"...)
	} else {
		dst = appendSpans(dst, a.Answer, m.uncited)
	}
	dst = append(dst, `,"gap_event":`...)
	dst = AppendGapEvent(dst, gap)
	return append(dst, '}'), nil
}

// appendSpans appends [s[at[0]:at[1]], s[at[2]:at[3]], ...] as JSON strings.
// A span with nothing to escape (every unknown tag, most sentences) is
// written in place when dst has the room (appendCheck sized it): under
// TinyGo each append is a runtime call, and 150,000 unknown tags took
// AppendString's calls most of a 1 MiB answer's time.
func appendSpans(dst []byte, s string, at []int) []byte {
	dst = append(dst, '[')
	for i := 0; i+1 < len(at); i += 2 {
		t := s[at[i]:at[i+1]]
		l := len(dst)
		if cap(dst)-l >= len(t)+3 {
			b := dst[l : l+len(t)+3]
			k := 0
			if i > 0 {
				b[0] = ','
				k = 1
			}
			b[k] = '"'
			if n := jsonx.PutPlain(b[k+1:], t); n == len(t) {
				b[k+1+n] = '"'
				dst = dst[:l+k+n+2]
				continue
			}
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendString(dst, t)
	}
	return append(dst, ']')
}
