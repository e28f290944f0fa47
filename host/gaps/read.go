package gaps

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ctxgate/ctxgate/internal/jsonl"
)

// DefaultMaxLineBytes bounds one JSONL line (4 MiB; jsonl says why).
const DefaultMaxLineBytes = jsonl.DefaultMaxLineBytes

// ReadOptions controls how strictly a JSONL file is read. The zero value
// reads a log as it may be after a crash: a malformed line is skipped and
// counted (ReadStats.Skipped, FirstErrors).
type ReadOptions struct {
	// Strict fails on the first malformed line instead of skipping it.
	Strict bool
	// MaxLineBytes bounds one line; 0 means DefaultMaxLineBytes.
	MaxLineBytes int
	// TornTail reports a last line that has no newline and does not read
	// apart (ReadStats.TornLast, not Skipped), skipped even when Strict: an
	// appending writer that died mid-line leaves one (and a reader of a
	// live file can catch one being written), and every line before it is
	// whole.
	TornTail bool
}

// ReadStats says what a read saw.
type ReadStats struct {
	Lines   int // lines read, blank ones included
	Events  int // events returned
	Skipped int // malformed lines skipped (not Strict)
	NotGaps int // decision lines whose gap_event was null: not a gap, not an error
	// TornLast is the number of the last line when it has no newline, does
	// not read and was skipped (ReadOptions.TornTail); 0 when there is none.
	TornLast int
	// FirstErrors holds up to 10 of the skipped lines' errors, so a user can
	// see what was wrong without re-running strictly.
	FirstErrors []*LineError
}

// LineError is a malformed line. Field names the offending JSON field when
// the problem is one field ("kind", "query_embedding[3]", "time").
type LineError = jsonl.LineError

// rawEvent is the wire shape. The nested GapEvent form lets a user pipe whole
// decisions (ctxgate eval output) straight in.
type rawEvent struct {
	Kind           *string                    `json:"kind"`
	Query          *string                    `json:"query"`
	QueryEmbedding []float64                  `json:"query_embedding"`
	Confidence     *float64                   `json:"confidence"`
	Signals        map[string]json.RawMessage `json:"signals"`
	TopChunks      []TopChunk                 `json:"top_chunks"`
	Time           *string                    `json:"time"`
	DecisionID     string                     `json:"decision_id"`
	Policy         *PolicyRef                 `json:"policy"`
	GapEvent       json.RawMessage            `json:"gap_event"`
}

// ReadEvents reads gap events, one JSON object per line. Blank lines are
// ignored; a line that is a whole decision is read through its gap_event.
func ReadEvents(r io.Reader, opt ReadOptions) ([]Event, ReadStats, error) {
	var out []Event
	st, err := ScanEvents(r, opt, func(ev Event) { out = append(out, ev) })
	return out, st, err
}

// ScanEvents reads gap events as ReadEvents does but hands each to fn
// instead of keeping them: memory stays bounded by one line whatever the
// log's length (gaps report streams through it).
func ScanEvents(r io.Reader, opt ReadOptions, fn func(Event)) (ReadStats, error) {
	var st ReadStats
	err := readJSONL(r, opt, &st, func(n int, line []byte) *LineError {
		ev, gap, lerr := decodeEvent(line, n)
		if lerr != nil {
			return lerr
		}
		if gap {
			st.Events++
			fn(ev)
		} else {
			st.NotGaps++
		}
		return nil
	})
	return st, err
}

// readJSONL calls decode for each non-blank line and owns what every JSONL
// reader shares: the line bound, the torn last line, and skipping (count the
// bad line, keep its error among the first ten, go on) versus stopping at
// the first bad line (Strict).
//
// Skipping, a file none of whose lines reads is still an error (its first
// line's): it is the wrong file, not a log with a bad line in it.
func readJSONL(r io.Reader, opt ReadOptions, st *ReadStats, decode func(n int, line []byte) *LineError) error {
	read := 0
	err := readLines(r, opt.MaxLineBytes, func(n int, line []byte, unterminated bool, lerr *LineError) error {
		st.Lines = n
		if lerr == nil {
			if len(line) == 0 {
				return nil
			}
			if lerr = decode(n, line); lerr == nil {
				read++
				return nil
			}
		}
		if unterminated && opt.TornTail {
			// The last line, cut short before its newline: what a writer
			// leaves when it dies mid-line. Every line before it is whole.
			st.TornLast = n
			return nil
		}
		if opt.Strict {
			return lerr
		}
		st.Skipped++
		if len(st.FirstErrors) < 10 {
			st.FirstErrors = append(st.FirstErrors, lerr)
		}
		return nil
	})
	if err == nil && read == 0 && st.Skipped > 0 {
		return st.FirstErrors[0]
	}
	return err
}

// readLines is jsonl.Lines with a LineError for a line over the bound.
func readLines(r io.Reader, max int, fn func(n int, line []byte, unterminated bool, lerr *LineError) error) error {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return jsonl.Lines(r, max, func(n int, line []byte, unterminated, tooLong bool) error {
		if tooLong {
			return fn(n, nil, false, &LineError{Line: n, Msg: "line longer than " + strconv.Itoa(max) + " bytes"})
		}
		return fn(n, line, unterminated, nil)
	})
}

func decodeEvent(line []byte, n int) (Event, bool, *LineError) {
	var raw rawEvent
	if err := json.Unmarshal(line, &raw); err != nil {
		return Event{}, false, jsonLineError(n, err)
	}
	if raw.Kind == nil && raw.Query == nil && raw.GapEvent != nil {
		// A whole decision: the event is its gap_event, the envelope its policy.
		if bytes.Equal(bytes.TrimSpace(raw.GapEvent), []byte("null")) {
			return Event{}, false, nil
		}
		var inner rawEvent
		if err := json.Unmarshal(raw.GapEvent, &inner); err != nil {
			e := jsonLineError(n, err)
			e.Field = "gap_event" + dotted(e.Field)
			return Event{}, false, e
		}
		inner.Time, inner.DecisionID, inner.Policy = raw.Time, raw.DecisionID, raw.Policy
		raw = inner
	}
	ev := Event{Line: n, DecisionID: raw.DecisionID, TopChunks: raw.TopChunks}
	if len(raw.Signals) > 0 {
		// Decoded by hand so that a bad value is named: signals.coverage.
		names := make([]string, 0, len(raw.Signals))
		for name := range raw.Signals {
			names = append(names, name)
		}
		sort.Strings(names)
		ev.Signals = make(map[string]float64, len(names))
		for _, name := range names {
			v, err := strconv.ParseFloat(string(raw.Signals[name]), 64)
			if err != nil {
				return ev, false, &LineError{Line: n, Field: "signals." + name, Msg: "must be a number, got " + string(raw.Signals[name])}
			}
			ev.Signals[name] = v
		}
	}
	if raw.Kind == nil {
		return ev, false, &LineError{Line: n, Field: "kind", Msg: "missing"}
	}
	if !validKind(*raw.Kind) {
		return ev, false, &LineError{Line: n, Field: "kind", Msg: "must be one of refusal_hard, refusal_soft, low_confidence, thumbs_down, got " + strconv.Quote(*raw.Kind)}
	}
	ev.Kind = *raw.Kind
	if raw.Query == nil || strings.TrimSpace(*raw.Query) == "" {
		return ev, false, &LineError{Line: n, Field: "query", Msg: "missing or empty"}
	}
	ev.Query = *raw.Query
	if len(raw.QueryEmbedding) > 0 {
		// An all-zero embedding has no direction: cosine is undefined, so the
		// event falls back to the lexical path rather than failing.
		var ss float64
		for _, x := range raw.QueryEmbedding {
			ss += x * x
		}
		if ss > 0 && !math.IsInf(ss, 0) {
			ev.QueryEmbedding = raw.QueryEmbedding
		}
	}
	if raw.Confidence != nil {
		ev.Confidence, ev.HasConfidence = *raw.Confidence, true
	}
	if raw.Time != nil {
		t, err := time.Parse(time.RFC3339Nano, *raw.Time)
		if err != nil {
			return ev, false, &LineError{Line: n, Field: "time", Msg: "not RFC 3339: " + strconv.Quote(*raw.Time)}
		}
		ev.Time, ev.HasTime = t, true
	}
	if raw.Policy != nil {
		ev.Policy = *raw.Policy
	}
	return ev, true, nil
}

// jsonLineError names the field encoding/json complained about, so that
// "signals.coverage: must be a number" reads like the gate's own errors.
func jsonLineError(n int, err error) *LineError {
	field, msg := jsonl.Describe(err)
	return &LineError{Line: n, Field: field, Msg: msg}
}

func dotted(f string) string {
	if f == "" {
		return ""
	}
	return "." + f
}
