package filter

import (
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/chat"
)

// checkAnswer runs the core's answer check on a chat.completion body and
// returns the headers that report it.
func checkAnswer(p *plugin, body []byte, tags []string) [][2]string {
	content, ok := chat.AnswerContent(body)
	if !ok {
		return [][2]string{{HeaderAnswerCheck, "skipped-no-content"}}
	}
	val := p.engine.Check(&gate.Answer{Answer: content, Tags: tags})
	st := p.stats
	st.checked.Increment(1)
	h := [][2]string{{HeaderAnswerCheck, "ok"}, {HeaderSoftRefusal, strconv.FormatBool(val.SoftRefusal)}}
	if val.SoftRefusal {
		inc(st.refusal, "soft")
	}
	if len(val.Unknown) > 0 {
		st.unknown.Increment(1)
		h = append(h, [2]string{HeaderUnknownCite, strings.Join(val.Unknown, ",")})
	}
	if len(val.UncitedSentences) > 0 {
		st.uncite.Increment(1)
	}
	h = append(h, [2]string{HeaderUncited, strconv.Itoa(len(val.UncitedSentences))})
	return h
}
