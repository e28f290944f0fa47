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
		// The refusal line as models echo it.
		{"I don’t have enough information to answer this from the provided sources.", true, "", "", ""},
		{"I don't have enough information to answer this from the provided sources", true, "", "", ""},
		{"i don't have enough information to answer this from the provided SOURCES.", true, "", "", ""},
		{"I\u00a0don't have enough information\u00a0to answer this from the provided sources.", true, "", "", ""},
		{"I don't have  enough\ninformation to answer this from the provided sources!", true, "", "", ""},
		{"‘I don’t have enough information to answer this from the provided sources.’", true, "", "", ""},
		{"Open settings [S2]. I don’t have enough information to answer this from the provided sources.", false, "S2", "", ""},
		{"I don't have enough information to answer this from the sources.", false, "", "", "I don't have enough information to answer this from the sources."},
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

// BenchmarkValidateLarge is validate on host/worstcase_bench_test.go's
// worst-case answer (max_request_bytes of it), whole and in its parts.
func BenchmarkValidateLarge(b *testing.B) {
	e := presetEngine(b, "default")
	answer := strings.Repeat("The key rotates every day [S1]. Nothing else is said here. ", 1<<20/59+1)[:1<<20-64]
	in := []byte(`{"answer":"` + answer + `","tags":["S1","S2"],"query":"q"}`)
	a, err := DecodeAnswer(in, &e.policy.Limits)
	if err != nil {
		b.Fatal(err)
	}
	v := e.Check(a)
	b.Run("validate", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		for range b.N {
			if _, err := e.Validate(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		for range b.N {
			DecodeAnswer(in, &e.policy.Limits)
		}
	})
	b.Run("check", func(b *testing.B) {
		for range b.N {
			e.Check(a)
		}
	})
	b.Run("check-encode-direct", func(b *testing.B) {
		for range b.N {
			e.appendCheck(nil, a)
		}
	})
	b.Run("encode", func(b *testing.B) {
		for range b.N {
			AppendValidation(nil, v)
		}
	})
}

// TestSoftRefusalShorterSentence: a sentence can be the refusal line in
// fewer bytes than the line (an ASCII apostrophe for a typographic one, one
// space for two), and is then not an uncited sentence.
func TestSoftRefusalShorterSentence(t *testing.T) {
	line := "I don’t  know."
	if !isSoftRefusal("i don't know", line) {
		t.Fatalf("isSoftRefusal: the line in fewer bytes not recognised")
	}
	m := &answerMemory{}
	sc := newAnswerScan(m, "Fact [S1]. i don't know. Other.", line, []string{"S1"})
	sc.run()
	if len(m.uncited) != 2 || sc.s[m.uncited[0]:m.uncited[1]] != "Other." {
		t.Errorf("uncited %v, want only \"Other.\"", m.uncited)
	}
}

func TestSoftRefusalNotLoose(t *testing.T) {
	for _, a := range []string{"", "   ", "I don't have enough information", "I do have enough information to answer this from the provided sources.",
		"I don't have enough information to answer this from the provided sources. But here is more."} {
		if isSoftRefusal(a, DefaultRefusalLine) {
			t.Errorf("%q taken for the refusal line", a)
		}
	}
}

// TestSummarizeMatchesCheck: Summarize reports what Check finds, the
// unknown tags cut to n.
func TestSummarizeMatchesCheck(t *testing.T) {
	e := presetEngine(t, "support-agent")
	for _, s := range answerCases {
		for _, tags := range answerTagSets {
			a := &Answer{Answer: s, Tags: tags}
			v := e.Check(a)
			for _, n := range []int{0, 1, 32} {
				got := e.Summarize(a, n)
				want := v.Unknown
				if len(want) > n {
					want = want[:n]
				}
				if got.SoftRefusal != v.SoftRefusal || got.Uncited != len(v.UncitedSentences) ||
					strings.Join(got.Unknown, ",") != strings.Join(want, ",") || got.MoreUnknown != (len(v.Unknown) > n) {
					t.Fatalf("%q %q n=%d: %+v, Check %+v", s, tags, n, got, v)
				}
			}
		}
	}
}
