package main

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The text format: a short summary for a person at a terminal, one labelled
// line per fact. The JSON (--format json) is the complete result; the text
// leaves out signals, prompts and the gap event's details.

// decision is the part of a decision the text summary shows.
type decision struct {
	Action         string  `json:"action"`
	Level          string  `json:"level"`
	Confidence     float64 `json:"confidence"`
	Band           string  `json:"band"`
	Interpretation string  `json:"interpretation"`
	FlagForReview  bool    `json:"flag_for_review"`
	Chunks         []struct {
		ID     string  `json:"id"`
		DocID  string  `json:"doc_id"`
		Tag    string  `json:"tag"`
		Kept   bool    `json:"kept"`
		Reason string  `json:"reason"`
		Score  float64 `json:"score"`
	} `json:"chunks"`
	Caveat  string `json:"caveat"`
	Refusal *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"refusal"`
	MissingAspects    []string `json:"missing_aspects"`
	ConfidenceFactors []string `json:"confidence_factors"`
	Recommendations   []string `json:"recommendations"`
	Warnings          []struct {
		Message string `json:"message"`
	} `json:"warnings"`
	GapEvent *struct {
		Kind string `json:"kind"`
	} `json:"gap_event"`
	Policy struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"policy"`
}

// maxDroppedShown bounds the dropped chunks listed; a request may carry
// hundreds.
const maxDroppedShown = 10

// actionMeaning says what the caller does with each action.
var actionMeaning = map[string]string{
	"inject":   "answer from the tagged sources (prompt.instructions + prompt.sources)",
	"caveat":   "answer from the tagged sources, and tell the user the caveat",
	"fallback": "answer without the sources (prompt.minimal)",
	"refuse":   "do not call the model; answer the refusal message",
}

// decisionText renders a decision; failed are the --fail-on verdicts it
// matched.
func decisionText(out []byte, failed []string) (string, error) {
	var d decision
	if err := json.Unmarshal(out, &d); err != nil {
		return "", errors.New("reading the decision: " + err.Error())
	}
	var t textBlock
	action := d.Action
	if m := actionMeaning[d.Action]; m != "" {
		action += ": " + m
	}
	if len(failed) > 0 {
		action += " [--fail-on: exit " + strconv.Itoa(exitVerdict) + "]"
	}
	t.line("action", action)
	conf := num(d.Confidence) + ", band " + d.Band
	if d.Level != "" {
		conf += " (" + d.Level + ")"
	}
	if d.FlagForReview {
		conf += ", flagged for review"
	}
	t.line("confidence", conf)
	if d.Interpretation != "" {
		t.line("", d.Interpretation)
	}
	if d.Policy.Name != "" {
		t.line("policy", label(d.Policy.Name, d.Policy.Version))
	}
	var kept, dropped [][]string
	for _, c := range d.Chunks {
		if c.Kept {
			row := []string{c.Tag, clip(c.ID, 40), orDash(clip(c.DocID, 40)), num(c.Score)}
			if c.Reason != "kept" {
				row = append(row, words(c.Reason))
			}
			kept = append(kept, row)
		} else {
			dropped = append(dropped, []string{clip(c.ID, 40), orDash(clip(c.DocID, 40)), num(c.Score), words(c.Reason)})
		}
	}
	t.table("kept", kept, "none")
	more := len(dropped) - maxDroppedShown
	if more > 0 {
		dropped = dropped[:maxDroppedShown]
	}
	t.table("dropped", dropped, "none")
	if more > 0 {
		t.line("", "... and "+strconv.Itoa(more)+" more (--format json lists every chunk)")
	}
	if d.Caveat != "" {
		t.line("caveat", d.Caveat)
	}
	if d.Refusal != nil {
		t.line("refusal", d.Refusal.Message)
	}
	t.list("missing", d.MissingAspects)
	t.list("factors", d.ConfidenceFactors)
	t.list("advice", d.Recommendations)
	warnings := make([]string, len(d.Warnings))
	for i, w := range d.Warnings {
		warnings[i] = w.Message
	}
	t.list("warning", warnings)
	if d.GapEvent != nil {
		t.line("gap", d.GapEvent.Kind+" (a knowledge-gap event; --gap-log records it)")
	}
	return t.String(), nil
}

// validationText renders a validation; failed are the --fail-on checks it
// matched.
func validationText(out []byte, failed []string) (string, error) {
	v, err := parseValidation(out)
	if err != nil {
		return "", err
	}
	var t textBlock
	verdict := "pass"
	if len(failed) > 0 {
		verdict = "FAIL: " + strings.Join(failed, ", ") + " [--fail-on: exit " + strconv.Itoa(exitVerdict) + "]"
	}
	t.line("verdict", verdict)
	if v.SoftRefusal {
		t.line("refusal", "the answer is the policy's refusal line (a soft refusal)")
	}
	t.line("cited", joinOr(v.Cited, "none"))
	if len(v.Unknown) > 0 {
		t.line("unknown", strings.Join(v.Unknown, ", ")+" (cited, but the prompt never offered them)")
	}
	shown := v.Uncited
	if len(shown) > maxDroppedShown {
		shown = shown[:maxDroppedShown]
	}
	quoted := make([]string, len(shown))
	for i, s := range shown {
		quoted[i] = strconv.Quote(clip(s, 100))
	}
	t.list("uncited", quoted)
	if n := len(v.Uncited) - len(shown); n > 0 {
		t.line("", "... and "+strconv.Itoa(n)+" more")
	}
	if v.GapEvent != nil {
		t.line("gap", v.GapEvent.Kind+" (a knowledge-gap event; --gap-log records it)")
	}
	return t.String(), nil
}

// textBlock is lines of "label  value", the labels in one column.
type textBlock struct{ rows [][2]string }

const labelWidth = 12

func (t *textBlock) line(label, value string) { t.rows = append(t.rows, [2]string{label, value}) }

// list writes one line per item, the label on the first.
func (t *textBlock) list(label string, items []string) {
	for i, it := range items {
		if i == 0 {
			t.line(label, it)
		} else {
			t.line("", it)
		}
	}
}

// table writes rows with aligned columns under one label, or empty.
func (t *textBlock) table(label string, rows [][]string, empty string) {
	if len(rows) == 0 {
		t.line(label, empty)
		return
	}
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	lines := make([]string, len(rows))
	for i, r := range rows {
		var b strings.Builder
		for j, c := range r {
			if j > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c)
			if j < len(r)-1 {
				b.WriteString(strings.Repeat(" ", width[j]-utf8.RuneCountInString(c)))
			}
		}
		lines[i] = strings.TrimRight(b.String(), " ")
	}
	t.list(label, lines)
}

func (t *textBlock) String() string {
	var b strings.Builder
	for _, r := range t.rows {
		b.WriteString(r[0])
		b.WriteString(strings.Repeat(" ", max(1, labelWidth-len(r[0]))))
		b.WriteString(oneLineText(r[1]))
		b.WriteByte('\n')
	}
	return b.String()
}

// num writes a score with three decimals: enough to read, short to scan.
func num(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }

func label(name, version string) string {
	if version == "" {
		return name
	}
	return name + "@" + version
}

// words turns a reason code into words: relevance_below_threshold ->
// relevance below threshold.
func words(code string) string { return strings.ReplaceAll(code, "_", " ") }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func joinOr(items []string, none string) string {
	if len(items) == 0 {
		return none
	}
	return strings.Join(items, ", ")
}

// clip shortens s to n runes.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-3]) + "..."
}

// oneLineText keeps a value on its line: ids, doc ids and messages come from
// the request and the policy, and a line break or a control character in
// them must not forge lines of the summary (or move a terminal's cursor).
func oneLineText(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}
