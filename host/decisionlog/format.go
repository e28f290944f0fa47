// Package decisionlog is the decision log and the feedback log that
// `ctxgate serve` writes (docs/decision-log.md): the line formats, a
// strict reader for each, and the join of the two into labeled calibration
// examples, the input of `ctxgate calibrate`.
//
// A decision line records one decision in the sense of OPA's decision logs:
// its id, time, endpoint, policy, outcome (action, level, band, confidence,
// signals, chunk outcomes) and, when the server is asked to, the gate
// request it decided, with masked fields erased. A feedback line records
// one POST /v1/feedback: the decision id and the fields the client sent
// (rating, answer_in_sources). The verdict calibration needs is
// answer_in_sources: true when the retrieved evidence answered the
// question (label 1), false when it did not (label 0).
//
// The writer functions (AppendDecision, AppendFeedback) are the only
// encoders of these lines, and the readers accept what they write, so the
// format has one definition.
package decisionlog

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// PolicyRef is the policy that made a decision: the decision's own
// policy object.
type PolicyRef struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

// Chunk is one chunk's outcome in a decision: its ids, whether it was kept
// (and under which tag), why, and its score, as the decision reported them.
// It never holds the chunk's text.
type Chunk struct {
	ID     string      `json:"id"`
	DocID  string      `json:"doc_id"`
	Tag    string      `json:"tag"`
	Kept   bool        `json:"kept"`
	Reason string      `json:"reason"`
	Score  json.Number `json:"score"`
}

// Decision is one decision-log line.
type Decision struct {
	ID        string    `json:"decision_id"`
	Timestamp time.Time `json:"timestamp"`
	// Path is the endpoint that decided: /v1/gate or /v1/chat/completions.
	Path       string          `json:"path"`
	Policy     PolicyRef       `json:"policy"`
	Action     string          `json:"action"`
	Level      string          `json:"level"`
	Band       string          `json:"band"`
	Confidence json.Number     `json:"confidence"` // the decision's digits
	Signals    json.RawMessage `json:"signals"`    // {name: value}, the decision's object
	Chunks     []Chunk         `json:"chunks"`
	// Input is the gate request decided (in gateway mode, the one built from
	// the chat body), when the server logs requests and it fit the line;
	// with the fields named by Erased removed.
	Input json.RawMessage `json:"input,omitempty"`
	// Erased names the mask groups removed from Input ("query", "text").
	Erased []string `json:"erased,omitempty"`
	// Omitted names the members left out because the line would have been
	// over the server's decision_log_max_line_bytes ("input", "chunks").
	Omitted []string `json:"omitted,omitempty"`

	// Line is the decision's line in the file it was read from (0 when
	// built in code), for a caller's own messages.
	Line int `json:"-"`
}

// Mask groups: what a masked decision log leaves out of the request.
const (
	// MaskQuery erases the request's query and query_embedding.
	MaskQuery = "query"
	// MaskText erases each chunk's text, title, embedding and metadata
	// (in chunks and in results_per_query).
	MaskText = "text"
)

// Feedback is one feedback-log line: one accepted POST /v1/feedback. The
// fields the client did not send are absent.
type Feedback struct {
	DecisionID string    `json:"decision_id"`
	Timestamp  time.Time `json:"timestamp"`
	Rating     string    `json:"rating,omitempty"` // "up" | "down"
	// AnswerInSources is the calibration verdict: the answer was in the
	// retrieved sources (true) or not (false).
	AnswerInSources *bool `json:"answer_in_sources,omitempty"`

	Line int `json:"-"` // as Decision.Line
}

// AppendDecision appends d as one decision-log line, newline included.
// Signals and Input must be compact JSON (no newline) and Confidence and
// each Score a JSON number or empty (written 0): the server hands over the
// decision's own bytes, which are.
func AppendDecision(dst []byte, d *Decision) []byte {
	dst = append(dst, `{"decision_id":`...)
	dst = jsonx.AppendString(dst, d.ID)
	dst = append(dst, `,"timestamp":`...)
	dst = appendTime(dst, d.Timestamp)
	dst = append(dst, `,"path":`...)
	dst = jsonx.AppendString(dst, d.Path)
	dst = append(dst, `,"policy":`...)
	dst = AppendPolicy(dst, d.Policy)
	dst = append(dst, `,"action":`...)
	dst = jsonx.AppendString(dst, d.Action)
	dst = append(dst, `,"level":`...)
	dst = jsonx.AppendString(dst, d.Level)
	dst = append(dst, `,"band":`...)
	dst = jsonx.AppendString(dst, d.Band)
	dst = append(dst, `,"confidence":`...)
	dst = appendNumber(dst, d.Confidence)
	dst = append(dst, `,"signals":`...)
	if len(d.Signals) == 0 {
		dst = append(dst, "{}"...)
	} else {
		dst = append(dst, d.Signals...)
	}
	if d.Chunks != nil {
		dst = append(dst, `,"chunks":[`...)
		for i := range d.Chunks {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendChunk(dst, &d.Chunks[i])
		}
		dst = append(dst, ']')
	}
	if len(d.Input) > 0 {
		dst = append(dst, `,"input":`...)
		dst = append(dst, d.Input...)
	}
	dst = appendList(dst, `,"erased":`, d.Erased)
	dst = appendList(dst, `,"omitted":`, d.Omitted)
	return append(dst, "}\n"...)
}

// AppendFeedback appends f as one feedback-log line, newline included.
func AppendFeedback(dst []byte, f *Feedback) []byte {
	dst = append(dst, `{"decision_id":`...)
	dst = jsonx.AppendString(dst, f.DecisionID)
	dst = append(dst, `,"timestamp":`...)
	dst = appendTime(dst, f.Timestamp)
	if f.Rating != "" {
		dst = append(dst, `,"rating":`...)
		dst = jsonx.AppendString(dst, f.Rating)
	}
	if f.AnswerInSources != nil {
		dst = append(dst, `,"answer_in_sources":`...)
		dst = strconv.AppendBool(dst, *f.AnswerInSources)
	}
	return append(dst, "}\n"...)
}

// appendTime writes RFC 3339 in UTC with nanoseconds, as the gap log does.
func appendTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"')
}

// AppendPolicy appends p as the decision's policy object writes it:
// {"name","version","sha256"}.
func AppendPolicy(dst []byte, p PolicyRef) []byte {
	dst = append(dst, `{"name":`...)
	dst = jsonx.AppendString(dst, p.Name)
	dst = append(dst, `,"version":`...)
	dst = jsonx.AppendString(dst, p.Version)
	dst = append(dst, `,"sha256":`...)
	dst = jsonx.AppendString(dst, p.SHA256)
	return append(dst, '}')
}

func appendChunk(dst []byte, c *Chunk) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsonx.AppendString(dst, c.ID)
	dst = append(dst, `,"doc_id":`...)
	dst = jsonx.AppendString(dst, c.DocID)
	dst = append(dst, `,"tag":`...)
	dst = jsonx.AppendString(dst, c.Tag)
	dst = append(dst, `,"kept":`...)
	dst = strconv.AppendBool(dst, c.Kept)
	dst = append(dst, `,"reason":`...)
	dst = jsonx.AppendString(dst, c.Reason)
	dst = append(dst, `,"score":`...)
	dst = appendNumber(dst, c.Score)
	return append(dst, '}')
}

func appendNumber(dst []byte, n json.Number) []byte {
	if n == "" {
		return append(dst, '0')
	}
	return append(dst, n...)
}

func appendList(dst []byte, key string, list []string) []byte {
	if len(list) == 0 {
		return dst
	}
	dst = append(dst, key...)
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendString(dst, s)
	}
	return append(dst, ']')
}
