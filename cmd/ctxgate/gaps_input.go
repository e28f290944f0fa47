package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// eventPaths expands the --events values (and a report's arguments) in
// order: a glob matches files in sorted order, "-" is standard input (at
// most once). The logs of several replicas are read one after another.
func eventPaths(values []string) ([]string, error) {
	var out []string
	stdin := false
	for _, v := range values {
		if v == "-" {
			if stdin {
				return nil, usageError{errors.New("standard input (-) can be read only once")}
			}
			stdin = true
			out = append(out, v)
			continue
		}
		if !strings.ContainsAny(v, "*?[") {
			out = append(out, v)
			continue
		}
		m, err := filepath.Glob(v)
		if err != nil {
			return nil, usageError{errors.New("--events " + quote(v) + ": " + err.Error())}
		}
		if len(m) == 0 {
			return nil, errors.New(v + ": no file matches")
		}
		sort.Strings(m)
		out = append(out, m...)
	}
	return out, nil
}

// openEvents opens one events input; a gzip stream (by its magic bytes,
// whatever the name) is decompressed.
func openEvents(name string, stdin io.Reader) (io.Reader, func(), error) {
	r, closeFn, err := openInput(name, stdin)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			closeFn()
			return nil, nil, err
		}
		return zr, func() { zr.Close(); closeFn() }, nil
	}
	return br, closeFn, nil
}

// eventsFlag is a repeatable --events.
type eventsFlag []string

func (e *eventsFlag) String() string     { return strings.Join(*e, ",") }
func (e *eventsFlag) Set(s string) error { *e = append(*e, s); return nil }

// sourceName says where the events came from, for the HTML page.
func sourceName(paths []string) string {
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = p
		if p == "-" {
			names[i] = "standard input"
		}
	}
	if len(names) > 3 {
		return names[0] + " and " + strconv.Itoa(len(names)-1) + " more files"
	}
	return strings.Join(names, ", ")
}
