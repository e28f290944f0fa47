package decisionlog

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Example is one labeled calibration example: a logged decision joined to
// its feedback verdict. As JSON it is a line of `ctxgate calibrate`'s
// input, {"request": {...}, "label": 1|0}, with the decision's own outcome
// beside it (what the production policy decided and from which signals).
type Example struct {
	// Request is the gate request as it was decided: present only when the
	// decision log held it whole (logged, nothing erased, nothing omitted),
	// so re-running it reproduces the logged decision. Absent, the example
	// still carries the signals.
	Request json.RawMessage `json:"request,omitempty"`
	// Label is 1 when the feedback said the answer was in the sources
	// (answer_in_sources true), 0 when it said it was not.
	Label int `json:"label"`
	// Group is the question the request asked (QuestionGroup), present with
	// the request: calibration counts every decision of one question as
	// one piece of evidence, however often it was asked.
	Group      string             `json:"group,omitempty"`
	DecisionID string             `json:"decision_id"`
	Timestamp  time.Time          `json:"timestamp"`
	Path       string             `json:"path"`
	Policy     PolicyRef          `json:"policy"`
	Action     string             `json:"action"`
	Level      string             `json:"level"`
	Band       string             `json:"band"`
	Confidence float64            `json:"confidence"`
	Signals    map[string]float64 `json:"signals"`
	// Rating is the last thumbs up/down for the decision, if any.
	Rating string `json:"rating,omitempty"`
	// Erased and Omitted are the decision line's: why Request is absent.
	Erased  []string `json:"erased,omitempty"`
	Omitted []string `json:"omitted,omitempty"`
}

// Stats says what a join saw.
type Stats struct {
	Decisions     int // decision lines
	FeedbackLines int // feedback lines
	// Verdicts is the number of logged decisions with at least one
	// feedback line.
	Verdicts int
	Examples int // decisions with an answer_in_sources verdict
	Positive int // examples labeled 1
	Negative int // examples labeled 0
	// WithoutRequest counts examples whose request was not logged whole.
	WithoutRequest int
	// RatingOnly counts decisions with a thumbs up/down but no
	// answer_in_sources: feedback, but no label.
	RatingOnly int
	// Replaced counts feedback values a later line for the same decision
	// replaced (the later one wins).
	Replaced int
	// UnknownFeedback counts feedback lines whose decision is not in the
	// decision logs given (rotated away, or logged by another replica).
	UnknownFeedback int
	// TornTails counts inputs whose last line was cut short and skipped.
	TornTails int
	// Skipped counts malformed lines skipped (Joiner.Strict off, the
	// default); FirstErrors holds the first ten, with file and line.
	Skipped     int
	FirstErrors []*LineError
}

// Joiner pairs decision logs with feedback logs. Add every file (a rotated
// log is several; the order does not matter), then call Examples.
//
// A malformed line (a fragment a crash left, a hand edit) is skipped and
// counted in Stats.Skipped by default, so one bad line does not stop a
// join of a month of logs; Strict makes it an error naming its file and
// line.
type Joiner struct {
	Strict bool

	decisions []Decision
	where     []string       // "source:line" of each decision
	byID      map[string]int // decision id -> index
	feedback  []fbLine
	st        Stats
}

type fbLine struct {
	Feedback
	seq int // arrival order, for equal timestamps
}

// NewJoiner returns an empty Joiner.
func NewJoiner() *Joiner { return &Joiner{byID: map[string]int{}} }

// AddDecisions reads one decision log. A decision id already read (the
// same file given twice) is an error naming the source and line, and so is
// a malformed line when Strict.
func (j *Joiner) AddDecisions(source string, r io.Reader) error {
	ds, st, err := readDecisions(r, source, j.Strict)
	j.count(st)
	if err != nil {
		return err
	}
	for i := range ds {
		d := ds[i]
		if prev, dup := j.byID[d.ID]; dup {
			return &LineError{Source: source, Line: d.Line, Field: "decision_id",
				Msg: strconv.Quote(d.ID) + " was already read at " + j.where[prev]}
		}
		j.byID[d.ID] = len(j.decisions)
		j.decisions = append(j.decisions, d)
		j.where = append(j.where, source+":"+strconv.Itoa(d.Line))
	}
	j.st.Decisions += len(ds)
	return nil
}

// AddFeedback reads one feedback log; a malformed line is an error naming
// the source and line when Strict.
func (j *Joiner) AddFeedback(source string, r io.Reader) error {
	fs, st, err := readFeedback(r, source, j.Strict)
	j.count(st)
	if err != nil {
		return err
	}
	for _, f := range fs {
		j.feedback = append(j.feedback, fbLine{f, len(j.feedback)})
	}
	j.st.FeedbackLines += len(fs)
	return nil
}

// count adds one file's torn tail and skipped lines to the stats.
func (j *Joiner) count(st ReadStats) {
	if st.TornTail > 0 {
		j.st.TornTails++
	}
	j.st.Skipped += st.Skipped
	for _, e := range st.FirstErrors {
		if len(j.st.FirstErrors) < maxFirstErrors {
			j.st.FirstErrors = append(j.st.FirstErrors, e)
		}
	}
}

// verdict is a decision's feedback, merged: each field keeps its latest
// value.
type verdict struct {
	rating string
	answer *bool
}

// Examples joins what was added. Feedback is applied in time order (equal
// timestamps: in the order read), each field's latest value winning, so a
// rating sent after a label does not erase the label. Examples come in
// decision-log order.
func (j *Joiner) Examples() ([]Example, Stats) {
	st := j.st
	fb := append([]fbLine(nil), j.feedback...)
	sort.SliceStable(fb, func(a, b int) bool {
		if !fb[a].Timestamp.Equal(fb[b].Timestamp) {
			return fb[a].Timestamp.Before(fb[b].Timestamp)
		}
		return fb[a].seq < fb[b].seq
	})
	verdicts := map[string]*verdict{}
	for _, f := range fb {
		if _, ok := j.byID[f.DecisionID]; !ok {
			st.UnknownFeedback++
			continue
		}
		v := verdicts[f.DecisionID]
		if v == nil {
			v = &verdict{}
			verdicts[f.DecisionID] = v
		}
		if f.Rating != "" {
			if v.rating != "" {
				st.Replaced++
			}
			v.rating = f.Rating
		}
		if f.AnswerInSources != nil {
			if v.answer != nil {
				st.Replaced++
			}
			v.answer = f.AnswerInSources
		}
	}
	st.Verdicts = len(verdicts)
	var out []Example
	for i := range j.decisions {
		d := &j.decisions[i]
		v := verdicts[d.ID]
		if v == nil {
			continue
		}
		if v.answer == nil {
			st.RatingOnly++
			continue
		}
		ex := exampleOf(d, v)
		if ex.Label == 1 {
			st.Positive++
		} else {
			st.Negative++
		}
		if ex.Request == nil {
			st.WithoutRequest++
		}
		out = append(out, ex)
	}
	st.Examples = len(out)
	return out, st
}

func exampleOf(d *Decision, v *verdict) Example {
	ex := Example{Label: 0, DecisionID: d.ID, Timestamp: d.Timestamp, Path: d.Path, Policy: d.Policy,
		Action: d.Action, Level: d.Level, Band: d.Band, Rating: v.rating, Erased: d.Erased, Omitted: d.Omitted}
	if *v.answer {
		ex.Label = 1
	}
	ex.Confidence, _ = d.Confidence.Float64()
	ex.Signals = map[string]float64{}
	if len(d.Signals) > 0 {
		json.Unmarshal(d.Signals, &ex.Signals) // read as an object of numbers: cannot fail
	}
	if len(d.Input) > 0 && len(d.Erased) == 0 && len(d.Omitted) == 0 {
		ex.Request = d.Input
		var q struct {
			Query string `json:"query"`
		}
		if json.Unmarshal(d.Input, &q) == nil {
			ex.Group = QuestionGroup(q.Query)
		}
	}
	return ex
}

// QuestionGroup is the calibration group of the decisions that asked
// query: its words, lowercased, so that "Reset my password" and "reset my
// password" are one question.
func QuestionGroup(query string) string {
	return "q:" + strings.Join(strings.Fields(strings.ToLower(query)), " ")
}

// Join reads one decision log and one feedback log strictly and joins them
// (Joiner for several files of each, or to skip malformed lines).
func Join(decisions, feedback io.Reader) ([]Example, Stats, error) {
	j := NewJoiner()
	j.Strict = true
	if err := j.AddDecisions("decisions", decisions); err != nil {
		return nil, Stats{}, err
	}
	if err := j.AddFeedback("feedback", feedback); err != nil {
		return nil, Stats{}, err
	}
	ex, st := j.Examples()
	return ex, st, nil
}

// AppendExample appends ex as one JSON line (the joined file's format).
func AppendExample(dst []byte, ex *Example) []byte {
	b, _ := json.Marshal(ex) // plain data: cannot fail
	dst = append(dst, b...)
	return append(dst, '\n')
}

// ReadExamples reads a joined file (what `ctxgate decisions join` writes)
// strictly: each non-blank line an example with a label of 0 or 1. A
// plain calibration line, {"request": {...}, "label": 1}, reads too.
func ReadExamples(r io.Reader, source string) ([]Example, error) {
	var out []Example
	_, err := readLines(r, source, true, func(n int, line []byte) *LineError {
		var ex struct {
			Example
			Label json.RawMessage `json:"label"`
		}
		if e := strict(line, &ex); e != nil {
			return e
		}
		switch {
		case ex.Label == nil:
			return &LineError{Field: "label", Msg: "missing"}
		case string(ex.Label) != "0" && string(ex.Label) != "1":
			return &LineError{Field: "label", Msg: "must be 0 or 1, got " + string(ex.Label)}
		case len(ex.Request) > 0 && !bytes.HasPrefix(ex.Request, []byte("{")):
			if string(ex.Request) != "null" {
				return &LineError{Field: "request", Msg: "must be an object (a gate request)"}
			}
			ex.Request = nil
		}
		if string(ex.Label) == "1" {
			ex.Example.Label = 1
		}
		out = append(out, ex.Example)
		return nil
	})
	return out, err
}
