package gate

import (
	"strings"
	"testing"
)

func TestCheckAnswer(t *testing.T) {
	e := presetEngine(t, "support-agent")
	tags := []string{"S1", "S2", "S3"}
	cases := []struct {
		answer         string
		soft           bool
		cited, unknown string
		uncited        string
	}{
		{"Open settings [S2]. Then click reset [S1, S3].", false, "S2 S1 S3", "", ""},
		{"Open settings.[S1][S2] Then reboot. Done [S7]!", false, "S1 S2", "S7", "Then reboot."},
		{"The rate is 3.5% [S1]. It changed in 2024.", false, "S1", "", "It changed in 2024."},
		{"  \"" + DefaultRefusalLine + "\"\n", true, "", "", ""},
		{DefaultRefusalLine + " Sorry.", false, "", "", "Sorry."},
		{"Line one [S1]\nLine two\n\n---\n", false, "S1", "", "Line two"},
		{"", false, "", "", ""},
		{"[S1 is not a tag] but this is [S2].", false, "S2", "", ""},
	}
	for i, c := range cases {
		v := e.Check(&Answer{Answer: c.answer, Tags: tags, Query: "q"})
		if v.SoftRefusal != c.soft || strings.Join(v.Cited, " ") != c.cited ||
			strings.Join(v.Unknown, " ") != c.unknown || strings.Join(v.UncitedSentences, "|") != c.uncited {
			t.Errorf("case %d: soft=%v cited=%q unknown=%q uncited=%q", i, v.SoftRefusal, v.Cited, v.Unknown, v.UncitedSentences)
		}
		if c.soft && (v.GapEvent == nil || v.GapEvent.Kind != "refusal_soft" || v.GapEvent.Query != "q") {
			t.Errorf("case %d: want refusal_soft gap event", i)
		}
		if !c.soft && v.GapEvent != nil {
			t.Errorf("case %d: unexpected gap event", i)
		}
	}
}
