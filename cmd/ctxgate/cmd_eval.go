package main

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/ctxgate/ctxgate/host"
)

func init() {
	register(command{name: "eval", help: "decide one request (JSON file or stdin); prints the decision JSON", run: runEval})
}

func runEval(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runGateCall("eval", "REQUEST.json", args, stdin, stdout, stderr, host.Evaluator.Evaluate)
}

// runGateCall is eval and validate: flags, one input, one call, the output
// JSON on stdout and a newline.
func runGateCall(name, inputName string, args []string, stdin io.Reader, stdout, stderr io.Writer,
	call func(host.Evaluator, context.Context, []byte) ([]byte, error)) int {
	fs := flag.NewFlagSet("ctxgate "+name, flag.ContinueOnError)
	var gf gateFlags
	gf.register(fs)
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: ctxgate "+name+" [flags] ["+inputName+"|-]\n")
		fs.PrintDefaults()
	}
	if code, done := parseFlags(fs, args, stderr); done {
		return code
	}
	if fs.NArg() > 1 {
		io.WriteString(stderr, "ctxgate "+name+": one "+inputName+" at most, got "+quote(fs.Arg(1))+" too\n")
		return exitUsage
	}
	input, err := readInput(fs.Arg(0), stdin, host.DefaultMaxInputBytes)
	if err != nil {
		return fail(stderr, name, err)
	}
	ctx := context.Background()
	ev, err := gf.open(ctx)
	if err != nil {
		return fail(stderr, name, err)
	}
	defer ev.Close(ctx)
	out, err := call(ev, ctx, input)
	if err != nil {
		return fail(stderr, name, err)
	}
	if _, err := stdout.Write(append(out, '\n')); err != nil {
		return fail(stderr, name, err)
	}
	if err := gf.logGap(out); err != nil {
		return fail(stderr, name, errors.New("gap log: "+err.Error()))
	}
	return exitOK
}
