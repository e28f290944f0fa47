package decisionlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/internal/jsonl"
)

// MaxLineBytes bounds one line a reader accepts: the server's largest
// configurable decision_log_max_line_bytes, so every line it writes reads
// back, while a corrupt file with no newlines is not read into memory whole.
const MaxLineBytes = 64 << 20

// LineError is a line that does not read: its source (the name given to
// the reader), its 1-based number, and the field at fault when there is one.
type LineError = jsonl.LineError

// ReadStats says what a read saw besides the records it returned.
type ReadStats struct {
	Lines int // lines read, blank ones included
	// TornTail is the number of a last line that has no newline and does not
	// read, skipped (0: none). A writer that dies mid-line leaves one, and a
	// reader of a live file can catch one being written; every line before
	// it is whole.
	TornTail int
	// Skipped counts malformed lines skipped by a lenient read (the
	// Joiner's default); FirstErrors holds the first ten.
	Skipped     int
	FirstErrors []*LineError
}

// maxFirstErrors is how many skipped lines' errors a read keeps.
const maxFirstErrors = 10

// ReadDecisions reads a decision log strictly: every non-blank line must be
// a decision (a torn last line excepted, see ReadStats.TornTail). source
// names the input in errors. The Joiner reads leniently by default.
func ReadDecisions(r io.Reader, source string) ([]Decision, ReadStats, error) {
	return readDecisions(r, source, true)
}

// ReadFeedback reads a feedback log strictly, as ReadDecisions does.
func ReadFeedback(r io.Reader, source string) ([]Feedback, ReadStats, error) {
	return readFeedback(r, source, true)
}

func readDecisions(r io.Reader, source string, strict bool) ([]Decision, ReadStats, error) {
	return readAll(r, source, strict, decodeDecision, func(d *Decision, n int) { d.Line = n })
}

func readFeedback(r io.Reader, source string, strict bool) ([]Feedback, ReadStats, error) {
	return readAll(r, source, strict, decodeFeedback, func(f *Feedback, n int) { f.Line = n })
}

// readAll reads records; leniently (not strict), a file none of whose lines
// reads is still an error (the first line's): it is not a torn log but the
// wrong file (a feedback log given as decisions).
func readAll[T any](r io.Reader, source string, strict bool, decode func([]byte) (T, *LineError), setLine func(*T, int)) ([]T, ReadStats, error) {
	var out []T
	st, err := readLines(r, source, strict, func(n int, line []byte) *LineError {
		v, lerr := decode(line)
		if lerr != nil {
			return lerr
		}
		setLine(&v, n)
		out = append(out, v)
		return nil
	})
	if err == nil && len(out) == 0 && st.Skipped > 0 {
		err = st.FirstErrors[0]
	}
	return out, st, err
}

// readLines calls decode on each non-blank line and fills in the line
// error's position; a torn last line is skipped and reported in the stats.
// A malformed line is an error when strict, else skipped and counted.
func readLines(r io.Reader, source string, strict bool, decode func(n int, line []byte) *LineError) (ReadStats, error) {
	var st ReadStats
	err := jsonl.Lines(r, MaxLineBytes, func(n int, line []byte, unterminated, tooLong bool) error {
		st.Lines = n
		var lerr *LineError
		switch {
		case tooLong:
			lerr = &LineError{Msg: "line longer than " + strconv.Itoa(MaxLineBytes) + " bytes"}
		case len(line) == 0:
			return nil
		default:
			lerr = decode(n, line)
		}
		if lerr == nil {
			return nil
		}
		if unterminated {
			st.TornTail = n
			return nil
		}
		lerr.Source, lerr.Line = source, n
		if strict {
			return lerr
		}
		st.Skipped++
		if len(st.FirstErrors) < maxFirstErrors {
			st.FirstErrors = append(st.FirstErrors, lerr)
		}
		return nil
	})
	return st, err
}

// strict decodes line into v, rejecting what is not one JSON object.
func strict(line []byte, v any) *LineError {
	if len(line) == 0 || line[0] != '{' {
		return &LineError{Msg: "not a JSON object"}
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return &LineError{Msg: "not JSON: the line ends inside a value (a write cut short?)"}
		}
		field, msg := jsonl.Describe(err)
		for _, embedded := range []string{"Decision.", "Feedback.", "Example."} {
			field = strings.TrimPrefix(field, embedded) // the readers' wrapper structs
		}
		return &LineError{Field: field, Msg: msg}
	}
	if dec.More() {
		return &LineError{Msg: "more than one JSON value on the line"}
	}
	// A repeated member is read differently by different parsers: bad
	// JSON, as in a gate request (encoding/json lets the last one win).
	if _, err := jsonx.ParseWith(line, jsonx.Limits{CheckOnly: true}); err != nil {
		return &LineError{Msg: "bad JSON: " + err.Error()}
	}
	return nil
}

func decodeDecision(line []byte) (Decision, *LineError) {
	var d struct {
		Decision
		Rating          json.RawMessage `json:"rating"`
		AnswerInSources json.RawMessage `json:"answer_in_sources"`
		Action          *string         `json:"action"`
	}
	if e := strict(line, &d); e != nil {
		return Decision{}, e
	}
	switch {
	case d.Action == nil && (d.Rating != nil || d.AnswerInSources != nil):
		return Decision{}, &LineError{Msg: "a feedback line, not a decision (are the decision and feedback files swapped?)"}
	case d.Action == nil || *d.Action == "":
		return Decision{}, &LineError{Field: "action", Msg: "missing"}
	case d.ID == "":
		return Decision{}, &LineError{Field: "decision_id", Msg: "missing"}
	case d.Timestamp.IsZero():
		return Decision{}, &LineError{Field: "timestamp", Msg: "missing"}
	}
	if len(d.Signals) > 0 {
		var sig map[string]float64
		if d.Signals[0] != '{' || json.Unmarshal(d.Signals, &sig) != nil {
			return Decision{}, &LineError{Field: "signals", Msg: "must be an object of numbers"}
		}
	}
	if len(d.Input) > 0 && d.Input[0] != '{' && string(d.Input) != "null" {
		return Decision{}, &LineError{Field: "input", Msg: "must be an object (the gate request)"}
	}
	if string(d.Input) == "null" {
		d.Input = nil
	}
	d.Decision.Action = *d.Action
	return d.Decision, nil
}

func decodeFeedback(line []byte) (Feedback, *LineError) {
	var f struct {
		Feedback
		Action json.RawMessage `json:"action"`
	}
	if e := strict(line, &f); e != nil {
		return Feedback{}, e
	}
	switch {
	case f.Action != nil:
		return Feedback{}, &LineError{Msg: "a decision line, not feedback (are the decision and feedback files swapped?)"}
	case f.DecisionID == "":
		return Feedback{}, &LineError{Field: "decision_id", Msg: "missing"}
	case f.Timestamp.IsZero():
		return Feedback{}, &LineError{Field: "timestamp", Msg: "missing"}
	case f.Rating != "" && f.Rating != "up" && f.Rating != "down":
		return Feedback{}, &LineError{Field: "rating", Msg: `must be "up" or "down", got ` + strconv.Quote(f.Rating)}
	case f.Rating == "" && f.AnswerInSources == nil:
		return Feedback{}, &LineError{Field: "answer_in_sources", Msg: "missing (a feedback line has a rating, answer_in_sources or both)"}
	}
	return f.Feedback, nil
}
