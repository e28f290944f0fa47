package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"time"

	"github.com/ctxgate/ctxgate/host"
	"github.com/ctxgate/ctxgate/host/gaps"
	"github.com/ctxgate/ctxgate/host/signing"
)

func init() {
	register(command{name: "eval", help: "decide one request (JSON file or stdin); prints the decision JSON", run: runEval})
}

func runEval(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var rf receiptFlags
	return runGateCall("eval", "REQUEST.json", args, stdin, stdout, stderr, host.Evaluator.Evaluate, &rf)
}

// receiptFlags are eval's opt-in decision receipts (docs/signing.md): the
// runner signs {request sha256, decision sha256, policy sha256, time, key id}
// so an auditor can later prove which policy decided what.
type receiptFlags struct {
	keys signFileList
	out  string
}

func (r *receiptFlags) register(fs *flag.FlagSet) {
	fs.Var(&r.keys, "receipt-key", "sign a decision receipt with this secret key `FILE` (repeatable; ctxgate keygen makes one)")
	fs.StringVar(&r.out, "receipt", "", "write the signed receipt to this `FILE` (needs --receipt-key)")
}

func (r *receiptFlags) check() error {
	if (len(r.keys) == 0) != (r.out == "") {
		return errors.New("--receipt and --receipt-key go together")
	}
	return nil
}

func (r *receiptFlags) after(request, decision []byte) error {
	if r.out == "" {
		return nil
	}
	keys, err := signing.ReadPrivateKeys(r.keys...)
	if err != nil {
		return err
	}
	_, ref, _, err := gaps.EventFromDecision(decision)
	if err != nil {
		return err
	}
	receipt, err := signing.SignReceipt(request, decision, ref.SHA256, time.Now(), keys...)
	if err != nil {
		return err
	}
	return os.WriteFile(r.out, receipt, 0o644)
}

// afterCall is a subcommand's own flags and the work it does with the
// input and output of a successful call.
type afterCall interface {
	register(*flag.FlagSet)
	check() error // the flags make sense together (else: usage, exit 2)
	after(input, output []byte) error
}

// runGateCall is eval and validate: flags, one input, one call, the output
// JSON on stdout and a newline.
func runGateCall(name, inputName string, args []string, stdin io.Reader, stdout, stderr io.Writer,
	call func(host.Evaluator, context.Context, []byte) ([]byte, error), extra afterCall) int {
	fs := flag.NewFlagSet("ctxgate "+name, flag.ContinueOnError)
	var gf gateFlags
	gf.register(fs)
	if extra != nil {
		extra.register(fs)
	}
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: ctxgate "+name+" [flags] ["+inputName+"|-]\n")
		fs.PrintDefaults()
	}
	if code, done := parseFlags(fs, args, stderr); done {
		return code
	}
	if extra != nil {
		if err := extra.check(); err != nil {
			io.WriteString(stderr, "ctxgate "+name+": "+err.Error()+"\n")
			return exitUsage
		}
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
	if extra != nil {
		if err := extra.after(input, out); err != nil {
			return fail(stderr, name, err)
		}
	}
	return exitOK
}
