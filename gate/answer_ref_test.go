package gate

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// checkRef is the answer check as it was before answerScan
// (answer_scan.go): a string per citation tag and per sentence, unknown tags
// deduplicated by a linear search, and a run of terminators rescanned from
// each of them. It is the reference the new walk is compared with
// (TestCheckMatchesRef, FuzzCheckMatchesRef); its output is the contract.
func checkRef(a *Answer, line string) *Validation {
	v := &Validation{}
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
			tags, end := parseCitationRef(s, i)
			if end < 0 {
				continue
			}
			for _, tag := range tags {
				if offered(tag) {
					v.Cited = appendUniqueRef(v.Cited, tag)
				} else {
					v.Unknown = appendUniqueRef(v.Unknown, tag)
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
					tags, end := parseCitationRef(s, m)
					if end > 0 {
						for _, tag := range tags {
							if offered(tag) {
								v.Cited = appendUniqueRef(v.Cited, tag)
							} else {
								v.Unknown = appendUniqueRef(v.Unknown, tag)
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

// parseCitationRef parses "[S1]", "[S1, S2]" or "[S1,S2]" at s[i] == '['. It
// returns the tags and the index after ']', or end -1 when s[i:] is not a
// citation.
func parseCitationRef(s string, i int) (tags []string, end int) {
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

func appendUniqueRef(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// answerCases are answers for the reference comparison: the check's rules
// (terminators, citations after them, quotes, lines), the tags' edge cases
// (leading zeros, S0, seven digits, spaces, repeats, unknowns) and text
// built to be slow or odd (terminator runs, Unicode spaces, invalid UTF-8).
var answerCases = []string{
	"",
	"Open settings [S2]. Then click reset [S1, S3].",
	"Open settings.[S1][S2] Then reboot. Done [S7]!",
	"The rate is 3.5% [S1]. It changed in 2024.",
	"  \"" + DefaultRefusalLine + "\"\n",
	"«" + DefaultRefusalLine + "» Sorry.",
	DefaultRefusalLine + " Sorry.",
	"One.\n" + DefaultRefusalLine + "\nTwo [S1].",
	"Line one [S1]\nLine two\n\n---\n",
	"[S1 is not a tag] but this is [S2].",
	"[S01] [S0] [S1234567] [S123456] [ S1 ] [S1 ,S2] [S1,,S2] [S1, S2, S9, S1, S01]",
	"[[S1]] [S1][S2][S3] [S] [S,S1] [S1 S2] [S1,] x[S4]y. z",
	"Wait... what?! Really?!?\" (yes). \"Quoted.\" Next) one.",
	"e.g. this... and that.x and .[S1] and ![S9] and ?\t[S2]\tok.\r\nNext",
	"Terminators" + strings.Repeat(".", 300) + "x" + strings.Repeat("!?\")", 100) + " end",
	"Spaces\u00a0\u2003around.\u0085 Next\u3000sentence.\u00a0",
	"\v\fControl spaces.\f\v Next\v.\f",
	"Bad \xff bytes. \xe2\x80 more\xc3. 知识检索增强 [S1]。 全角！",
	"   \t  ",
	". . . ! ?",
	"No terminator at all [S3",
	strings.Repeat("The key rotates every day [S1]. Nothing else is said here. ", 50),
	func() string {
		var b strings.Builder
		for i := range 300 {
			b.WriteString("Claim " + strconv.Itoa(i) + " [S" + strconv.Itoa(i%40) + ", S" + strconv.Itoa(1000+i) + "]. ")
		}
		return b.String()
	}(),
}

var answerTagSets = [][]string{
	nil,
	{"S1", "S2", "S3"},
	{"S2", "S1", "S1", "S01", "x", "S", "S12345678", "S3"},
	{"S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "S10", "S11", "S12", "S13", "S14", "S15", "S16", "S17", "S18", "S19", "S20",
		"S21", "S22", "S23", "S24", "S25", "S26", "S27", "S28", "S29", "S30", "S31", "S32", "S33", "S34", "S35", "S36", "S37", "S38", "S39"},
}

func checkAgainstRef(t *testing.T, e *Engine, a *Answer) {
	t.Helper()
	got := e.Check(a)
	want := checkRef(a, e.policy.Messages.RefusalLine)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("answer %q tags %q:\n got %+v\nwant %+v", a.Answer, a.Tags, got, want)
	}
	w := AppendValidation(nil, want)
	if g := AppendValidation(nil, got); !bytes.Equal(g, w) {
		t.Fatalf("answer %q: JSON\n%s\nwant\n%s", a.Answer, g, w)
	}
	if g, err := e.appendCheck([]byte("x"), a); err != nil || !bytes.Equal(g[1:], w) || g[0] != 'x' {
		t.Fatalf("answer %q: appendCheck\n%s\nwant\n%s", a.Answer, g, w)
	}
}

func TestCheckMatchesRef(t *testing.T) {
	for _, policy := range []string{"default", "support-agent"} {
		e := presetEngine(t, policy)
		for _, s := range answerCases {
			for _, tags := range answerTagSets {
				checkAgainstRef(t, e, &Answer{Answer: s, Tags: tags, Query: "q"})
			}
		}
	}
	// Random answers from the fragments the rules turn on.
	frags := []string{"a", "word", " ", "  ", "\t", "\n", "\r", "\v", "\f", "\u0085", ".", "!", "?", "\"", ")", "[", "]", ",", "S", "S1", "S01",
		"1", "9", "[S1]", "[S2, S9]", "[S", "é", "\u00a0", "\u3000", "\xff", "e.g", "3.5", DefaultRefusalLine}
	rng := rand.New(rand.NewPCG(1, 2))
	e := presetEngine(t, "support-agent")
	for range 3000 {
		var b strings.Builder
		for n := rng.IntN(40); n > 0; n-- {
			b.WriteString(frags[rng.IntN(len(frags))])
		}
		checkAgainstRef(t, e, &Answer{Answer: b.String(), Tags: answerTagSets[rng.IntN(len(answerTagSets))]})
	}
}

func FuzzCheckMatchesRef(f *testing.F) {
	for i, s := range answerCases {
		f.Add(s, strings.Join(answerTagSets[i%len(answerTagSets)], ","))
	}
	e := presetEngine(f, "support-agent")
	f.Fuzz(func(t *testing.T, answer, tags string) {
		var ts []string
		if tags != "" {
			ts = strings.Split(tags, ",")
		}
		checkAgainstRef(t, e, &Answer{Answer: answer, Tags: ts, Query: "q"})
	})
}

// Answers the old walk took minutes on (a run of terminators rescanned from
// each; each new unknown tag compared with all before it) give the same
// result in one linear pass.
func TestCheckSlowInputs(t *testing.T) {
	e := presetEngine(t, "support-agent")
	dots := strings.Repeat(".!?\")", 1<<18) + "x"
	v := e.Check(&Answer{Answer: dots})
	if len(v.UncitedSentences) != 1 || v.UncitedSentences[0] != dots {
		t.Errorf("terminator run: %d uncited sentences, want the whole answer", len(v.UncitedSentences))
	}
	var b strings.Builder
	const n = 200000
	for i := range n {
		b.WriteString("[S" + strconv.Itoa(100000+i) + "]")
	}
	v = e.Check(&Answer{Answer: b.String(), Tags: []string{"S1", "S100001"}})
	if len(v.Cited) != 1 || v.Cited[0] != "S100001" || len(v.Unknown) != n-1 || v.Unknown[0] != "S100000" || v.Unknown[n-2] != "S"+strconv.Itoa(100000+n-1) {
		t.Errorf("unknown tags: cited %v, %d unknown", v.Cited, len(v.Unknown))
	}
}

// Validate (JSON in, JSON out without a Validation) gives the old check's
// bytes and errors: the answer cases as JSON, with tag lists DecodeAnswer accepts
// or rejects.
func TestValidateMatchesCheck(t *testing.T) {
	e := presetEngine(t, "support-agent")
	for _, s := range answerCases {
		for _, tags := range answerTagSets {
			in := append(jsonx.AppendString([]byte(`{"query":" q ","answer":`), s), `,"tags":[`...)
			for i, tag := range tags {
				if i > 0 {
					in = append(in, ',')
				}
				in = jsonx.AppendString(in, tag)
			}
			in = append(in, "]}"...)
			got, gotErr := e.Validate(in)
			inPlace, inPlaceErr := e.AppendValidateInPlace([]byte("prefix"), append([]byte(nil), in...))
			if !bytes.HasPrefix(inPlace, []byte("prefix")) {
				t.Fatalf("%s: AppendValidateInPlace dropped dst: %q", in, inPlace)
			}
			inPlace = inPlace[len("prefix"):]
			if !bytes.Equal(inPlace, got) || (inPlaceErr == nil) != (gotErr == nil) {
				t.Fatalf("%s: AppendValidateInPlace\n%s (%v)\nValidate\n%s (%v)", in, inPlace, inPlaceErr, got, gotErr)
			}
			a, err := DecodeAnswer(in, &e.policy.Limits)
			if err != nil {
				if gotErr == nil || gotErr.Error() != err.Error() {
					t.Fatalf("%s: validate error %v, DecodeAnswer %v", in, gotErr, err)
				}
				continue
			}
			if want := AppendValidation(nil, checkRef(a, e.policy.Messages.RefusalLine)); gotErr != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: validate\n%s (%v)\nwant\n%s", in, got, gotErr, want)
			}
		}
	}
}
