package calibrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/host/gaps"
)

// Example is one labeled request.
type Example struct {
	Request *gate.Request
	// Label is true when the evidence answers the question (1), false
	// when it does not (0).
	Label bool
	// Group keeps examples together: examples with the same non-empty
	// Group always land in the same split (one question asked against two
	// retrievals, or asked twice), and count once in the bound. "" is a
	// group of its own, unless its request is another example's: identical
	// requests always share a group (evidence.go).
	Group string
	// Line is where the example was read (1-based), for messages; 0 when
	// it was not read from a file.
	Line int
	pos  int // 1-based index in the caller's examples, once deduplicated
}

// where names an example in a message: its line when known, else its
// place among the caller's examples.
func (e *Example) where(i int) string {
	switch {
	case e.Line > 0:
		return "line " + strconv.Itoa(e.Line)
	case e.pos > 0:
		return "example " + strconv.Itoa(e.pos)
	}
	return "example " + strconv.Itoa(i+1)
}

// LineError is a bad line of an examples file: its number, the field
// ("request.chunks[0].scores.vector", "label"; "" for the whole line) and
// what is wrong. It is the gap log reader's line error.
type LineError = gaps.LineError

// maxLine bounds one line: the largest request the gate accepts (its
// default max_request_bytes, 4 MiB) plus room for the label and group.
const maxLine = 4<<20 + 64<<10

// ReadExamples reads labeled examples, one JSON object a line:
//
//	{"request": {...gate request...}, "label": 1, "group": "q17"}
//
// label is 1 (the evidence answers the question) or 0; group is optional
// (see Example.Group). Blank lines are skipped. The request is decoded as
// the gate decodes it, under lim (nil: the gate's default limits), so an
// example the gate would reject is rejected here, naming the line and the
// field. The lines `ctxgate decisions join` writes are read too: their
// other members (the logged decision's id, time, outcome and signals) are
// known and ignored, and a joined line without a request (masked in the
// log) is an error naming the line, as it cannot be calibrated from. Any
// other key is an error, so that a misspelt "group" is not silently
// ignored.
func ReadExamples(r io.Reader, lim *gate.Limits) ([]Example, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var out []Example
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		ex, err := parseExample(b, lim)
		if err != nil {
			err.Line = line
			return nil, err
		}
		ex.Line = line
		out = append(out, ex)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &LineError{Line: line + 1, Msg: "longer than " + strconv.Itoa(maxLine) + " bytes"}
		}
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no examples")
	}
	return out, nil
}

func parseExample(b []byte, lim *gate.Limits) (Example, *LineError) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return Example{}, &LineError{Msg: "not a JSON object: " + err.Error()}
	}
	var ex Example
	joined := false
	for k := range raw {
		switch k {
		case "request", "label", "group":
		case "decision_id", "timestamp", "path", "policy", "action", "level", "band", "confidence",
			"signals", "rating", "erased", "omitted":
			joined = true // a line of `ctxgate decisions join`
		default:
			return ex, &LineError{Field: k, Msg: "unknown field (want request, label and optionally group)"}
		}
	}
	req, ok := raw["request"]
	if !ok || bytes.Equal(bytes.TrimSpace(req), []byte("null")) {
		if joined {
			return ex, &LineError{Field: "request", Msg: "missing: the decision log did not hold this request whole (serve --decision-log-request, unmasked; or join with --request-only)"}
		}
		return ex, &LineError{Field: "request", Msg: "missing"}
	}
	r, err := gate.DecodeRequest(req, lim)
	if err != nil {
		var ge *gate.Error
		if errors.As(err, &ge) {
			f := "request"
			if ge.Field != "" {
				f += "." + ge.Field
			}
			return ex, &LineError{Field: f, Msg: ge.Message}
		}
		return ex, &LineError{Field: "request", Msg: err.Error()}
	}
	if field, msg := CheckRequest(r); msg != "" {
		return ex, &LineError{Field: "request." + field, Msg: msg}
	}
	ex.Request = r
	lab, ok := raw["label"]
	if !ok {
		return ex, &LineError{Field: "label", Msg: "missing (want 1 or 0)"}
	}
	switch string(bytes.TrimSpace(lab)) {
	case "1":
		ex.Label = true
	case "0":
	default:
		return ex, &LineError{Field: "label", Msg: "must be 1 or 0, not " + clip(string(lab))}
	}
	if g, ok := raw["group"]; ok {
		if err := json.Unmarshal(g, &ex.Group); err != nil {
			return ex, &LineError{Field: "group", Msg: "must be a string"}
		}
	}
	// A repeated member ("label": 1, "label": 0) is read differently by
	// different parsers: bad JSON, as in a gate request (checked last, so
	// that what the request decoder can name by field, it names).
	if _, err := jsonx.ParseWith(b, jsonx.Limits{CheckOnly: true}); err != nil {
		return ex, &LineError{Msg: "bad JSON: " + err.Error()}
	}
	return ex, nil
}

func clip(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return fmt.Sprintf("%s", s)
}

// WriteExample appends one example as ReadExamples reads it; req is the
// request's JSON.
func WriteExample(w io.Writer, req json.RawMessage, label bool, group string) error {
	line := struct {
		Request json.RawMessage `json:"request"`
		Label   int             `json:"label"`
		Group   string          `json:"group,omitempty"`
	}{req, b2i(label), group}
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
