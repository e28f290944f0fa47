package server

import "bytes"

// Server-sent events as the gateway edits them: one event is the bytes up
// to and including its blank line (lines end in \n, \r\n or \r). Only the
// event's data changes; its other lines (event:, id:, comments) and line
// endings are kept.

// nextEvent returns the length of the first complete event in b, or 0 when
// b holds none yet.
func nextEvent(b []byte) int {
	lineStart := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\n' && c != '\r' {
			continue
		}
		end := i + 1
		if c == '\r' {
			if i+1 >= len(b) {
				return 0 // a \r at the end may be the start of \r\n
			}
			if b[i+1] == '\n' {
				end = i + 2
			}
		}
		if i == lineStart { // an empty line: the event ends here
			return end
		}
		i = end - 1
		lineStart = end
	}
	return 0
}

// eventData returns an event's data as a client reads it: the values of its
// data lines (after "data:" and one optional space; a line "data" alone is
// an empty value) joined by "\n". ok is false for an event without data.
// A JSON value split over several data lines is whole here, as it is to the
// SDKs.
func eventData(ev []byte) (data []byte, ok bool) {
	eachLine(ev, func(line []byte, _, _ int) {
		v, is := dataValue(line)
		if !is {
			return
		}
		if ok {
			data = append(data, '\n')
		}
		data, ok = append(data, v...), true
	})
	if ok && data == nil {
		data = []byte{}
	}
	return data, ok
}

// dataValue is the value of a data line.
func dataValue(line []byte) ([]byte, bool) {
	if string(line) == "data" {
		return nil, true
	}
	v, has := bytes.CutPrefix(line, []byte("data:"))
	if !has {
		return nil, false
	}
	if len(v) > 0 && v[0] == ' ' {
		v = v[1:]
	}
	return v, true
}

// eachLine calls fn with each line of ev (without its ending) and the
// offsets of the line and of the next one.
func eachLine(ev []byte, fn func(line []byte, start, next int)) {
	for i := 0; i < len(ev); {
		j := i
		for j < len(ev) && ev[j] != '\n' && ev[j] != '\r' {
			j++
		}
		next := j
		if next < len(ev) {
			next++
			if ev[j] == '\r' && next < len(ev) && ev[next] == '\n' {
				next++
			}
		}
		fn(ev[i:j], i, next)
		i = next
	}
}

// withEventData returns ev with its data replaced: one data line in place
// of the first, the event's other lines (event:, id:, comments) and line
// endings kept, its other data lines dropped.
func withEventData(dst, ev, data []byte) []byte {
	first := true
	eachLine(ev, func(line []byte, start, next int) {
		if _, is := dataValue(line); !is {
			dst = append(dst, ev[start:next]...)
			return
		}
		if !first {
			return
		}
		first = false
		dst = append(dst, "data: "...)
		dst = append(dst, data...)
		dst = append(dst, ev[start+len(line):next]...)
	})
	return dst
}

// streamEditor changes a stream on a gated endpoint as it is relayed, one
// complete event at a time: the caveat in the answer's text, the
// sufficiency object on the final event, the upstream's own sufficiency
// removed.
type streamEditor interface {
	// event appends what to send for one complete event. An error ends
	// the stream: the event cannot be edited and must not be relayed.
	event(dst, ev []byte) ([]byte, error)
	// end appends what to send when the upstream ended its stream cleanly.
	end(dst []byte) []byte
}
