package filter

import (
	"strconv"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/chat"
)

// checkAnswer runs the core's answer check on a chat.completion body and
// returns the headers that report it.
func checkAnswer(p *plugin, body []byte, tags []string) [][2]string {
	content, ok := chat.AnswerContentUsing(&p.json, body)
	if !ok {
		return [][2]string{{HeaderAnswerCheck, "skipped-no-content"}}
	}
	val := p.engine.Summarize(&gate.Answer{Answer: content, Tags: tags}, chat.MaxUnknownCitations)
	st := p.stats
	st.checked.Increment(1)
	h := [][2]string{{HeaderAnswerCheck, "ok"}, {HeaderSoftRefusal, strconv.FormatBool(val.SoftRefusal)}}
	if val.SoftRefusal {
		inc(st.refusal, "soft")
	}
	if len(val.Unknown) > 0 {
		st.unknown.Increment(1)
		tags := chat.UnknownCitations(val.Unknown)
		if val.MoreUnknown {
			tags += ",..."
		}
		h = append(h, [2]string{HeaderUnknownCite, tags})
	}
	if val.Uncited > 0 {
		st.uncite.Increment(1)
	}
	h = append(h, [2]string{HeaderUncited, strconv.Itoa(val.Uncited)})
	return h
}
