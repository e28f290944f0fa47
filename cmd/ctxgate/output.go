package main

import (
	"errors"
	"flag"
	"io"
	"os"
)

// outputFormat is --format for commands that print a result: "json" for
// programs, "text" for people. Unset, it is text when stdout is a terminal
// and JSON otherwise (a pipe, a file), so `ctxgate eval req.json | jq` and
// scripts get JSON without asking.
type outputFormat struct{ value string }

func (o *outputFormat) register(fs *flag.FlagSet) {
	fs.StringVar(&o.value, "format", "", "output `FORMAT`: json or text (default: text on a terminal, json otherwise)")
}

// text resolves the format for stdout. A value other than json and text is
// a usage error.
func (o *outputFormat) text(stdout io.Writer) (bool, error) {
	switch o.value {
	case "":
		return stdoutIsTerminal(stdout), nil
	case "text":
		return true, nil
	case "json":
		return false, nil
	}
	return false, usageError{errors.New("--format must be json or text, got " + quote(o.value))}
}

// stdoutIsTerminal is isTerminal; tests replace it to act as a terminal.
var stdoutIsTerminal = isTerminal

// isTerminal reports whether w is a character device: a terminal (and
// /dev/null, where the format does not matter). golang.org/x/term is not a
// dependency, and this needs no ioctl.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
