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

// eventData finds the data of an event with exactly one data line: the
// value (after "data:" and one optional space) and its offsets in ev, so a
// caller can splice a new value in. ok is false for an event with no data
// or several data lines; such events are relayed as they are.
func eventData(ev []byte) (data []byte, start, end int, ok bool) {
	found := false
	for i := 0; i < len(ev); {
		j := i
		for j < len(ev) && ev[j] != '\n' && ev[j] != '\r' {
			j++
		}
		line := ev[i:j]
		if v, has := bytes.CutPrefix(line, []byte("data:")); has {
			if found {
				return nil, 0, 0, false
			}
			found = true
			start = i + len("data:")
			if len(v) > 0 && v[0] == ' ' {
				start++
			}
			data, end = ev[start:j], j
		}
		if j < len(ev) && ev[j] == '\r' && j+1 < len(ev) && ev[j+1] == '\n' {
			j++
		}
		i = j + 1
	}
	return data, start, end, found
}

// withData returns ev with its data (at start:end, from eventData) replaced.
func withData(dst, ev []byte, start, end int, data []byte) []byte {
	dst = append(dst, ev[:start]...)
	dst = append(dst, data...)
	return append(dst, ev[end:]...)
}

// streamEditor changes a gated stream as it is relayed, one complete event
// at a time: the caveat in the answer's text, the sufficiency object on the
// final event.
type streamEditor interface {
	// event appends what to send for one complete event.
	event(dst, ev []byte) []byte
	// end appends what to send when the upstream ended its stream cleanly.
	end(dst []byte) []byte
}
