package main

import (
	"errors"
	"flag"
	"io"

	"github.com/ctxgate/ctxgate/bench/eval/quality"
)

func init() {
	register(command{name: "evalset", help: "measure every policy on ../shared/data and write docs/quality.md", run: runEvalset})
}

// runEvalset regenerates the quality report. Absent data is a skip (exit 0
// with a message), so CI without ../shared/data passes.
func runEvalset(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ctxgate evalset", flag.ContinueOnError)
	root := fs.String("root", "", "repository root (default: the directory holding go.mod above the working directory)")
	data := fs.String("data", "", "data directory (default: $CTXGATE_DATA or <root>/../shared/data)")
	out := fs.String("out", "", "report path; plots are written beside it (default: <root>/docs/quality.md)")
	if code, done := parseFlags(fs, args, stderr); done {
		return code
	}
	err := quality.Regenerate(*root, *data, *out, stdout)
	if errors.Is(err, quality.ErrSkipped) {
		io.WriteString(stdout, "ctxgate evalset: "+err.Error()+"\n")
		return exitOK
	}
	if err != nil {
		io.WriteString(stderr, "ctxgate evalset: "+err.Error()+"\n")
		return exitFail
	}
	return exitOK
}
