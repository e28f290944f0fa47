// Package jsonl reads JSON-lines files the way every reader in ctxgate
// does: bounded lines, surrounding space and a leading BOM trimmed, the
// last line flagged when it has no newline (a writer that died mid-line
// leaves one), and encoding/json's errors described for a person.
package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// DefaultMaxLineBytes bounds one line when the caller gives no bound. A
// 4096-dimension embedding written with full float precision is about
// 100 KB, so 4 MiB leaves room for anything legitimate while keeping a
// corrupt file (no newlines) from being read into memory whole.
const DefaultMaxLineBytes = 4 << 20

// Lines calls fn for each line n (1-based), trimmed of CR/LF and
// surrounding space, a leading BOM removed; tooLong (with a nil line) for a
// line over max bytes; unterminated for a last line with no newline. It
// stops at the first error fn returns, or a read error.
func Lines(r io.Reader, max int, fn func(n int, line []byte, unterminated, tooLong bool) error) error {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for n := 1; ; n++ {
		buf = buf[:0]
		tooLong := false
		var err error
		for {
			var part []byte
			part, err = br.ReadSlice('\n')
			if !tooLong {
				if len(buf)+len(part) > max+1 { // +1: the newline itself
					tooLong = true
					buf = buf[:0]
				} else {
					buf = append(buf, part...)
				}
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			return err
		}
		if tooLong {
			if e := fn(n, nil, false, true); e != nil {
				return e
			}
		} else if len(buf) > 0 || err == nil {
			line := bytes.TrimSpace(buf)
			if n == 1 {
				line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
			}
			if e := fn(n, line, err == io.EOF, false); e != nil {
				return e
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// LineError is a line that does not read: its source (a file name, or ""),
// its 1-based number, and the field at fault when the problem is one field
// ("kind", "query_embedding[3]", "signals").
type LineError struct {
	Source string
	Line   int
	Field  string
	Msg    string
}

func (e *LineError) Error() string {
	s := "line " + strconv.Itoa(e.Line) + ": "
	if e.Source != "" {
		s = e.Source + ":" + strconv.Itoa(e.Line) + ": "
	}
	if e.Field != "" {
		s += e.Field + ": "
	}
	return s + e.Msg
}

// Describe turns an encoding/json decoding error into the field it is
// about ("" when none) and a message: "must be a number, got string",
// "not JSON at byte 12: ...".
func Describe(err error) (field, msg string) {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field, "must be " + typeName(te.Type.Kind().String()) + ", got " + te.Value
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "", "not JSON at byte " + strconv.FormatInt(se.Offset, 10) + ": " + se.Error()
	}
	return "", err.Error()
}

func typeName(kind string) string {
	switch kind {
	case "float64":
		return "a number"
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	}
	return kind
}
