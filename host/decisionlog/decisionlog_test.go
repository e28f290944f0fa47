package decisionlog

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

func decision(id string, at time.Duration, input string, erased ...string) Decision {
	d := Decision{ID: id, Timestamp: t0.Add(at), Path: "/v1/gate",
		Policy: PolicyRef{"default", "3", "ab12"}, Action: "inject", Level: "sufficient", Band: "HIGH",
		Confidence: "0.91", Signals: json.RawMessage(`{"max_similarity":0.88,"coverage":0.5}`),
		Chunks: []Chunk{{ID: "kb1", DocID: "kb/a", Tag: "S1", Kept: true, Reason: "kept", Score: "0.88"},
			{ID: "kb2", DocID: "kb/b", Reason: "evidence_below_floor", Score: "0.1"}},
		Erased: erased}
	if input != "" {
		d.Input = json.RawMessage(input)
	}
	return d
}

func decisionLog(ds ...Decision) []byte {
	var b []byte
	for i := range ds {
		b = AppendDecision(b, &ds[i])
	}
	return b
}

func feedbackLog(fs ...Feedback) []byte {
	var b []byte
	for i := range fs {
		b = AppendFeedback(b, &fs[i])
	}
	return b
}

// TestRoundTrip: what the writers write, the readers read back field for
// field, one line each.
func TestRoundTrip(t *testing.T) {
	ds := []Decision{
		decision("a", 0, `{"query":"q","chunks":[{"id":"kb1","text":"t"}]}`),
		decision("b", time.Second, `{"chunks":[{"id":"kb1"}]}`, MaskQuery, MaskText),
		{ID: "c", Timestamp: t0, Path: "/v1/chat/completions", Action: "refuse", Chunks: []Chunk{}, Omitted: []string{"input"}},
	}
	b := decisionLog(ds...)
	if n := bytes.Count(b, []byte("\n")); n != len(ds) {
		t.Fatalf("%d lines for %d decisions:\n%s", n, len(ds), b)
	}
	got, st, err := ReadDecisions(bytes.NewReader(b), "d.jsonl")
	if err != nil || st.Lines != 3 || st.TornTail != 0 {
		t.Fatalf("read: %v %+v", err, st)
	}
	ds[2].Signals = json.RawMessage(`{}`) // absent signals are written {}, an absent confidence 0
	ds[2].Confidence = "0"
	for i := range ds {
		ds[i].Line = i + 1
		if !reflect.DeepEqual(got[i], ds[i]) {
			t.Errorf("decision %d:\n got %+v\nwant %+v", i, got[i], ds[i])
		}
	}

	fs := []Feedback{{DecisionID: "a", Timestamp: t0, Rating: "down"}, {DecisionID: "a", Timestamp: t0, AnswerInSources: no()},
		{DecisionID: "b", Timestamp: t0, Rating: "up", AnswerInSources: yes()}}
	fb, _, err := ReadFeedback(bytes.NewReader(feedbackLog(fs...)), "f.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for i := range fs {
		fs[i].Line = i + 1
		if !reflect.DeepEqual(fb[i], fs[i]) {
			t.Errorf("feedback %d: got %+v, want %+v", i, fb[i], fs[i])
		}
	}
}

// TestJoin: each decision with an answer_in_sources verdict becomes one
// example in decision-log order; a later value replaces an earlier one
// field by field (by timestamp, whatever the file order); feedback for a
// decision not in the logs is counted, not an error.
func TestJoin(t *testing.T) {
	req := `{"query":"How do I reset my password?","chunks":[{"id":"kb1","text":"open Settings","scores":{"vector":0.88}}]}`
	dec := decisionLog(
		decision("d1", 0, req),
		decision("d2", 1*time.Second, req),
		decision("d3", 2*time.Second, req),
		decision("d4", 3*time.Second, `{"chunks":[{"id":"kb1"}]}`, MaskQuery, MaskText),
		decision("d5", 4*time.Second, ""),
		decision("d6", 5*time.Second, req),
	)
	// Two feedback files, as a rotated log gives them, the newer first.
	newer := feedbackLog(
		Feedback{DecisionID: "d2", Timestamp: t0.Add(20 * time.Second), AnswerInSources: yes()}, // replaces false
		Feedback{DecisionID: "d4", Timestamp: t0.Add(21 * time.Second), Rating: "up"},           // keeps d4's label
		Feedback{DecisionID: "gone", Timestamp: t0.Add(22 * time.Second), AnswerInSources: yes()},
	)
	older := feedbackLog(
		Feedback{DecisionID: "d1", Timestamp: t0.Add(10 * time.Second), AnswerInSources: yes()},
		Feedback{DecisionID: "d2", Timestamp: t0.Add(11 * time.Second), Rating: "down", AnswerInSources: no()},
		Feedback{DecisionID: "d3", Timestamp: t0.Add(12 * time.Second), Rating: "down"},
		Feedback{DecisionID: "d4", Timestamp: t0.Add(13 * time.Second), Rating: "down", AnswerInSources: no()},
		Feedback{DecisionID: "d5", Timestamp: t0.Add(14 * time.Second), AnswerInSources: no()},
	)
	j := NewJoiner()
	if err := j.AddDecisions("decisions.jsonl", bytes.NewReader(dec)); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"feedback.jsonl": newer, "feedback.jsonl.1": older} {
		if err := j.AddFeedback(name, bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
	}
	ex, st := j.Examples()
	type row struct {
		id      string
		label   int
		rating  string
		request bool
	}
	var got []row
	for _, e := range ex {
		got = append(got, row{e.DecisionID, e.Label, e.Rating, e.Request != nil})
	}
	want := []row{{"d1", 1, "", true}, {"d2", 1, "down", true}, {"d4", 0, "up", false}, {"d5", 0, "", false}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("examples:\n got %+v\nwant %+v", got, want)
	}
	wantSt := Stats{Decisions: 6, FeedbackLines: 8, Verdicts: 5, Examples: 4, Positive: 2, Negative: 2,
		WithoutRequest: 2, RatingOnly: 1, Replaced: 2, UnknownFeedback: 1}
	if !reflect.DeepEqual(st, wantSt) {
		t.Fatalf("stats:\n got %+v\nwant %+v", st, wantSt)
	}
	// The request is the logged one, byte for byte; the signals and the
	// decision's outcome ride along.
	e := ex[0]
	if string(e.Request) != req || e.Confidence != 0.91 || e.Signals["max_similarity"] != 0.88 ||
		e.Policy.SHA256 != "ab12" || e.Action != "inject" || e.Band != "HIGH" || !e.Timestamp.Equal(t0) {
		t.Fatalf("example = %+v", e)
	}
	if ex[2].Erased == nil || ex[2].Request != nil {
		t.Fatalf("a masked decision's example: %+v", ex[2])
	}

	// The joined file reads back, and so does a plain calibration line.
	var out []byte
	for i := range ex {
		out = AppendExample(out, &ex[i])
	}
	out = append(out, `{"request":{"query":"q"},"label":0}`+"\n"...)
	back, err := ReadExamples(bytes.NewReader(out), "examples.jsonl")
	if err != nil || len(back) != 5 {
		t.Fatalf("ReadExamples: %d, %v\n%s", len(back), err, out)
	}
	if !reflect.DeepEqual(back[1], ex[1]) || back[4].Label != 0 || string(back[4].Request) != `{"query":"q"}` {
		t.Fatalf("read back:\n got %+v\nwant %+v\n%+v", back[1], ex[1], back[4])
	}
}

// TestJoinEqualTimestamps: two verdicts with one timestamp: the one read
// later wins (the server writes a decision's feedback in order).
func TestJoinEqualTimestamps(t *testing.T) {
	ex, st, err := Join(bytes.NewReader(decisionLog(decision("d", 0, ""))), bytes.NewReader(feedbackLog(
		Feedback{DecisionID: "d", Timestamp: t0, AnswerInSources: no()},
		Feedback{DecisionID: "d", Timestamp: t0, AnswerInSources: yes()},
	)))
	if err != nil || len(ex) != 1 || ex[0].Label != 1 || st.Replaced != 1 {
		t.Fatalf("%+v %+v %v", ex, st, err)
	}
}

// TestBadLines: a malformed line is an error naming its file, line and
// field; nothing is joined past it.
func TestBadLines(t *testing.T) {
	good := string(decisionLog(decision("d1", 0, "")))
	goodFB := string(feedbackLog(Feedback{DecisionID: "d1", Timestamp: t0, AnswerInSources: yes()}))
	cases := []struct {
		name, decisions, feedback, want string
	}{
		{"not JSON", good + "\n{oops\n", goodFB, "decisions:3: not JSON at byte"},
		{"not an object", "[1,2]\n", goodFB, "decisions:1: not a JSON object"},
		{"two values", good[:len(good)-1] + " {}\n", goodFB, "decisions:1: more than one JSON value"},
		{"no action", `{"decision_id":"x","timestamp":"2026-05-01T12:00:00Z"}` + "\n", goodFB, "decisions:1: action: missing"},
		{"no id", `{"action":"inject","timestamp":"2026-05-01T12:00:00Z"}` + "\n", goodFB, "decisions:1: decision_id: missing"},
		{"no timestamp", `{"decision_id":"x","action":"inject"}` + "\n", goodFB, "decisions:1: timestamp: missing"},
		{"bad timestamp", `{"decision_id":"x","action":"inject","timestamp":"yesterday"}` + "\n", goodFB, "decisions:1: "},
		{"signals not numbers", `{"decision_id":"x","action":"inject","timestamp":"2026-05-01T12:00:00Z","signals":{"a":"b"}}` + "\n", goodFB, "decisions:1: signals: must be an object of numbers"},
		{"input not an object", `{"decision_id":"x","action":"inject","timestamp":"2026-05-01T12:00:00Z","input":"q"}` + "\n", goodFB, "decisions:1: input: must be an object"},
		{"confidence a string", `{"decision_id":"x","action":"inject","timestamp":"2026-05-01T12:00:00Z","confidence":"high"}` + "\n", goodFB, "decisions:1: "},
		{"duplicate id", good + good, goodFB, `decisions:2: decision_id: "d1" was already read at decisions:1`},
		{"files swapped", goodFB, good, "decisions:1: a feedback line, not a decision"},
		{"decision in feedback", good, good, "feedback:1: a decision line, not feedback"},
		{"bad rating", good, goodFB + `{"decision_id":"d1","timestamp":"2026-05-01T12:00:00Z","rating":"meh"}` + "\n", `feedback:2: rating: must be "up" or "down", got "meh"`},
		{"no verdict", good, `{"decision_id":"d1","timestamp":"2026-05-01T12:00:00Z"}` + "\n", "feedback:1: answer_in_sources: missing"},
		{"verdict a string", good, `{"decision_id":"d1","timestamp":"2026-05-01T12:00:00Z","answer_in_sources":"yes"}` + "\n", "feedback:1: answer_in_sources: must be"},
		{"feedback without id", good, `{"timestamp":"2026-05-01T12:00:00Z","rating":"up"}` + "\n", "feedback:1: decision_id: missing"},
		// A repeated member means different things to different readers:
		// bad JSON, as in a gate request.
		{"duplicate verdict", good, `{"decision_id":"d1","timestamp":"2026-05-01T12:00:00Z","answer_in_sources":true,"answer_in_sources":false}` + "\n",
			`feedback:1: bad JSON: offset 0: duplicate key "answer_in_sources"`},
		{"duplicate decision id", `{"decision_id":"x","decision_id":"y","action":"inject","timestamp":"2026-05-01T12:00:00Z"}` + "\n", goodFB,
			`decisions:1: bad JSON: offset 0: duplicate key "decision_id"`},
		{"duplicate key in the request", `{"decision_id":"x","action":"inject","timestamp":"2026-05-01T12:00:00Z","input":{"query":"a","query":"b"}}` + "\n", goodFB,
			`decisions:1: bad JSON: offset 80: duplicate key "query"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex, _, err := Join(strings.NewReader(c.decisions), strings.NewReader(c.feedback))
			if err == nil || !strings.HasPrefix(err.Error(), c.want) || ex != nil {
				t.Fatalf("err = %v, want it to start with %q", err, c.want)
			}
			var le *LineError
			if !errorsAs(err, &le) || le.Line == 0 {
				t.Fatalf("not a *LineError with a line: %#v", err)
			}
		})
	}
}

func errorsAs(err error, le **LineError) bool {
	e, ok := err.(*LineError)
	*le = e
	return ok
}

// TestTornTail: a last line cut short (a writer that died mid-line, or a
// live file read mid-write) is skipped and counted; blank lines are
// ignored; a bad line that ends with a newline is still an error.
func TestTornTail(t *testing.T) {
	dec := string(decisionLog(decision("d1", 0, ""), decision("d2", 0, "")))
	torn := dec + "\n" + `{"decision_id":"d3","timestamp":"2026-05-01T12`
	fb := string(feedbackLog(Feedback{DecisionID: "d1", Timestamp: t0, AnswerInSources: yes()},
		Feedback{DecisionID: "d2", Timestamp: t0, AnswerInSources: no()}))
	j := NewJoiner()
	if err := j.AddDecisions("d", strings.NewReader(torn)); err != nil {
		t.Fatal(err)
	}
	if err := j.AddFeedback("f", strings.NewReader(fb[:len(fb)-20])); err != nil {
		t.Fatal(err)
	}
	ex, st := j.Examples()
	if len(ex) != 1 || ex[0].DecisionID != "d1" || st.TornTails != 2 || st.Decisions != 2 {
		t.Fatalf("%+v %+v", ex, st)
	}
	if _, _, err := ReadDecisions(strings.NewReader(torn+"\n"), "d"); err == nil || !strings.HasPrefix(err.Error(), "d:4: ") {
		t.Fatalf("a bad line with its newline: %v", err)
	}
}

// TestReadExamplesBad: the joined file's reader names the line and field.
func TestReadExamplesBad(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"request":{"query":"q"}}`, "x:1: label: missing"},
		{`{"request":{"query":"q"},"label":2}`, "x:1: label: must be 0 or 1, got 2"},
		{`{"request":{"query":"q"},"label":"1"}`, "x:1: label: must be"},
		{`{"request":"q","label":1}`, "x:1: request: must be an object"},
		{"{\"request\":{},\"label\":1}\n{", "x:2: "},
		{`{"request":{"query":"q"},"label":1,"label":0}`, `x:1: bad JSON: offset 0: duplicate key "label"`},
	} {
		if _, err := ReadExamples(strings.NewReader(c.in+"\n"), "x"); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.in, err, c.want)
		}
	}
}

// TestJoinSkipsMalformed: a fragment a crash left in the middle of a
// decision log or a feedback log is skipped and counted by the Joiner,
// which joins every other line, naming the first skipped line's file and
// line; Strict makes it an error, as Join is.
func TestJoinSkipsMalformed(t *testing.T) {
	dec := string(decisionLog(decision("d1", 0, ""))) + `{"decision_id":"d9","timest` + "\n" + string(decisionLog(decision("d2", 0, "")))
	fb := string(feedbackLog(Feedback{DecisionID: "d1", Timestamp: t0, AnswerInSources: yes()})) + `{"decision_` + "\n" +
		string(feedbackLog(Feedback{DecisionID: "d2", Timestamp: t0, AnswerInSources: no()}))
	j := NewJoiner()
	if err := j.AddDecisions("decisions.jsonl", strings.NewReader(dec)); err != nil {
		t.Fatal(err)
	}
	if err := j.AddFeedback("feedback.jsonl", strings.NewReader(fb)); err != nil {
		t.Fatal(err)
	}
	ex, st := j.Examples()
	if len(ex) != 2 || st.Skipped != 2 || len(st.FirstErrors) != 2 || st.Decisions != 2 || st.FeedbackLines != 2 ||
		!strings.HasPrefix(st.FirstErrors[0].Error(), "decisions.jsonl:2: not JSON") || !strings.HasPrefix(st.FirstErrors[1].Error(), "feedback.jsonl:2: not JSON") {
		t.Fatalf("%d examples, stats %+v, first errors %v", len(ex), st, st.FirstErrors)
	}
	strict := NewJoiner()
	strict.Strict = true
	if err := strict.AddDecisions("decisions.jsonl", strings.NewReader(dec)); err == nil || !strings.HasPrefix(err.Error(), "decisions.jsonl:2: ") {
		t.Fatalf("strict: %v", err)
	}
}
