package main

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/text from the golden decisions in ../../testdata/decisions")

// textGoldens are golden decisions, one per action, whose text summaries are
// pinned in testdata/text (go test ./cmd/ctxgate -run TestTextGolden -update).
var textGoldens = []string{
	"default/inject", "default/caveat", "default/refuse_off_topic", "default/no_chunks",
	"wikigr/fallback_low_similarity", "sufficient-context/insufficient_decline",
	"default/distances_sent_as_cosine", // a decision with a warning
}

func TestTextGolden(t *testing.T) {
	for _, name := range textGoldens {
		t.Run(name, func(t *testing.T) {
			dec, err := os.ReadFile(filepath.Join("..", "..", "testdata", "decisions", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := decisionText(dec, nil)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "text", strings.ReplaceAll(name, "/", "_")+".txt")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./cmd/ctxgate -run TestTextGolden -update writes it)", err)
			}
			if got != string(want) {
				t.Fatalf("text summary of %s:\n%s\nwant:\n%s", name, got, want)
			}
		})
	}
}

// The summary has what a person needs: the action, confidence and band,
// kept chunks with tags, dropped ones with reasons, the refusal or caveat,
// missing aspects and advice; ids from the request cannot forge lines.
func TestDecisionTextContent(t *testing.T) {
	refuse, _ := os.ReadFile(filepath.Join("..", "..", "testdata", "decisions", "default", "refuse_off_topic.json"))
	caveat, _ := os.ReadFile(filepath.Join("..", "..", "testdata", "decisions", "default", "caveat.json"))
	for _, c := range []struct {
		name string
		dec  []byte
		want []string
	}{
		{"refuse", refuse, []string{
			"action      refuse: do not call the model", "confidence  0.038, band INSUFFICIENT (insufficient), flagged for review",
			"kept        S1  kb3  kb/billing", "refusal     I don't have sufficient evidence",
			"missing     Query term 'refund' not found in context", "advice      Top score is low (0.21)", "gap         refusal_hard",
		}},
		{"caveat", caveat, []string{
			"action      caveat", "kept        S1  kb1  kb/security  0.802\n",
			"dropped     kb2  kb/sso      0.000  relevance below threshold", "caveat      Based on limited available information",
		}},
	} {
		got, err := decisionText(c.dec, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: no %q in\n%s", c.name, w, got)
			}
		}
	}

	// Many dropped chunks: ten are listed; ids with line breaks stay on
	// their line.
	var b strings.Builder
	b.WriteString(`{"action":"refuse","band":"LOW","chunks":[`)
	for i := range 25 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":"c` + strconv.Itoa(i) + `\naction      inject","doc_id":"d","tag":"","kept":false,"reason":"evidence_below_floor","score":0.1}`)
	}
	b.WriteString(`],"refusal":{"type":"hard","message":"no\r\nway"}}`)
	got, err := decisionText([]byte(b.String()), []string{"refuse"})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(got, "evidence below floor"); n != maxDroppedShown || !strings.Contains(got, "... and 15 more") {
		t.Errorf("%d dropped chunks listed:\n%s", n, got)
	}
	if strings.Count(got, "\naction") != 0 || !strings.Contains(got, "[--fail-on: exit 3]") || !strings.Contains(got, "refusal     no  way\n") {
		t.Errorf("forged or missing lines:\n%s", got)
	}
	if _, err := decisionText([]byte(`not json`), nil); err == nil {
		t.Error("a malformed decision rendered")
	}
}

// --format: text on a terminal, JSON into a pipe or file; either can be
// forced; the CLI's text is decisionText of the JSON it would print.
func TestEvalFormat(t *testing.T) {
	code, js, errs := cli(t, goodRequest, "eval", "--native")
	if code != exitOK || !strings.HasPrefix(js, `{"action":`) || !strings.HasSuffix(js, "}\n") {
		t.Fatalf("default into a buffer: exit %d %q %s", code, js, errs)
	}
	want, err := decisionText([]byte(strings.TrimSuffix(js, "\n")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, text, _ := cli(t, goodRequest, "eval", "--native", "--format", "text"); text != want {
		t.Fatalf("--format text:\n%s\nwant:\n%s", text, want)
	}
	asTerminal(t)
	if _, auto, _ := cli(t, goodRequest, "eval", "--native"); auto != want {
		t.Fatalf("on a terminal:\n%s", auto)
	}
	if _, forced, _ := cli(t, goodRequest, "eval", "--native", "--format", "json"); forced != js {
		t.Fatalf("--format json on a terminal: %q", forced)
	}
	if code, _, errs := cli(t, goodRequest, "eval", "--native", "--format", "yaml"); code != exitUsage || !oneLine(errs) {
		t.Fatalf("--format yaml: exit %d %q", code, errs)
	}
}

// --fail-on: exit 3 exactly when the decision's action is listed, in every
// mode; the decision is still printed.
func TestEvalFailOn(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	requests := map[string][2]string{ // action: policy, request
		"inject":   {"default", read("default/inject")},
		"caveat":   {"default", read("default/caveat")},
		"refuse":   {"default", read("default/refuse_off_topic")},
		"fallback": {"wikigr", read("wikigr/fallback_low_similarity")},
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			f := modeFlags(t, mode)
			for action, r := range requests {
				for _, c := range []struct {
					failOn []string
					code   int
				}{
					{nil, exitOK},
					{[]string{"--fail-on", "refuse,fallback"}, map[bool]int{true: exitVerdict, false: exitOK}[action == "refuse" || action == "fallback"]},
					{[]string{"--fail-on", action}, exitVerdict},
					{[]string{"--fail-on", "inject", "--fail-on", "caveat"}, map[bool]int{true: exitVerdict, false: exitOK}[action == "inject" || action == "caveat"]},
					{[]string{"--fail-on", action, "--fail-on", "none"}, exitOK},
				} {
					args := append(append([]string{"eval", "--policy", r[0]}, f...), c.failOn...)
					code, out, errs := cli(t, r[1], args...)
					if code != c.code || !strings.Contains(out, `"action":"`+action+`"`) || errs != "" {
						t.Errorf("%s %v: exit %d (want %d), stdout %.60q, stderr %q", action, c.failOn, code, c.code, out, errs)
					}
				}
			}
		})
	}
	for _, bad := range []string{"refused", "refuse,", "accept"} {
		if code, _, errs := cli(t, goodRequest, "eval", "--native", "--fail-on", bad); code != exitUsage || !strings.Contains(errs, "unknown verdict") {
			t.Errorf("--fail-on %q: exit %d %q", bad, code, errs)
		}
	}
	// A gate error is exit 1 whatever --fail-on says.
	if code, _, _ := cli(t, `{"query":7}`, "eval", "--native", "--fail-on", "refuse"); code != exitFail {
		t.Errorf("bad request with --fail-on: exit %d", code)
	}
}

// validate exits 3 for a soft refusal or an unknown citation by default;
// --fail-on picks the checks; the text says which failed.
func TestValidateVerdicts(t *testing.T) {
	const (
		clean   = `{"answer":"Generate a new key pair and publish it first [S1].","tags":["S1","S2"]}`
		unknown = `{"answer":"Generate a new key pair [S1]. It rotates every ninety days [S3].","tags":["S1","S2"]}`
		uncited = `{"answer":"Generate a new key pair [S1]. Then wait.","tags":["S1"]}`
		refusal = `{"answer":"I don't have enough information to answer this from the provided sources.","tags":["S1"],"query":"q"}`
	)
	for _, c := range []struct {
		name, answer string
		args         []string
		code         int
		text         string
	}{
		{"clean", clean, nil, exitOK, "verdict     pass\ncited       S1\n"},
		{"unknown citation", unknown, nil, exitVerdict, "verdict     FAIL: unknown [--fail-on: exit 3]\ncited       S1\nunknown     S3 (cited, but the prompt never offered them)\n"},
		{"soft refusal", refusal, nil, exitVerdict, "verdict     FAIL: soft_refusal [--fail-on: exit 3]\nrefusal     the answer is the policy's refusal line (a soft refusal)\ncited       none\ngap         refusal_soft"},
		{"uncited by default", uncited, nil, exitOK, "verdict     pass\ncited       S1\nuncited     \"Then wait.\"\n"},
		{"uncited asked for", uncited, []string{"--fail-on", "uncited_sentences"}, exitVerdict, "FAIL: uncited_sentences"},
		{"--fail-on replaces the default", unknown, []string{"--fail-on", "soft_refusal"}, exitOK, "verdict     pass"},
		{"--fail-on none", refusal, []string{"--fail-on", "none"}, exitOK, "verdict     pass"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, js, errs := cli(t, c.answer, append([]string{"validate", "--native"}, c.args...)...)
			if code != c.code || !strings.HasPrefix(js, `{"soft_refusal":`) {
				t.Fatalf("json: exit %d (want %d) %q %q", code, c.code, js, errs)
			}
			code, text, errs := cli(t, c.answer, append([]string{"validate", "--native", "--format", "text"}, c.args...)...)
			if code != c.code || !strings.Contains(text, c.text) {
				t.Fatalf("text: exit %d (want %d) %q, want %q (%s)", code, c.code, text, c.text, errs)
			}
		})
	}
	if code, _, errs := cli(t, clean, "validate", "--native", "--fail-on", "refuse"); code != exitUsage || !strings.Contains(errs, "want soft_refusal, unknown, uncited_sentences") {
		t.Fatalf("validate --fail-on refuse: exit %d %q", code, errs)
	}
}

// help documents every exit code.
func TestHelpExitCodes(t *testing.T) {
	_, out, _ := cli(t, "", "help")
	for _, code := range []int{exitOK, exitFail, exitUsage, exitVerdict} {
		if !strings.Contains(out, "\n  "+strconv.Itoa(code)+"  ") {
			t.Errorf("help does not explain exit %d:\n%s", code, out)
		}
	}
	_, _, errs := cli(t, "", "eval", "-h")
	if !strings.Contains(errs, exitCodesHelp) || !strings.Contains(errs, "-fail-on") || !strings.Contains(errs, "-format") {
		t.Errorf("eval -h:\n%s", errs)
	}
}
