package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ctxgate/ctxgate/host"
	"github.com/ctxgate/ctxgate/host/gaps"
	"github.com/ctxgate/ctxgate/host/signing"
)

func init() {
	register(command{name: "eval", help: "decide one request (JSON file or stdin): the decision as JSON or a text summary", run: runEval})
}

func runEval(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var rf receiptFlags
	return gateCall{
		name: "eval", input: "REQUEST.json",
		call:     host.Evaluator.Evaluate,
		text:     decisionText,
		verdicts: decisionVerdicts,
		failOn:   newFailOn(actions),
		failHelp: "exit 3 when the decision's action is one of these, comma-separated: " + strings.Join(actions, ", ") + "",
		receipt:  &rf,
	}.run(args, stdin, stdout, stderr)
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
	fs.StringVar(&r.out, "receipt", "", "write the signed receipt to this `FILE` (needs --receipt-key); it covers the JSON written to stdout, byte for byte")
}

func (r *receiptFlags) check() error {
	if (len(r.keys) == 0) != (r.out == "") {
		return errors.New("--receipt and --receipt-key go together")
	}
	return nil
}

// sign writes the receipt for request and written, the exact bytes eval
// wrote to stdout (the decision JSON and its newline): what an auditor
// holds is the file `eval > dec.json` made, and `sha256sum dec.json` is the
// receipt's decision_sha256.
func (r *receiptFlags) sign(request, decision, written []byte) error {
	keys, err := signing.ReadPrivateKeys(r.keys...)
	if err != nil {
		return err
	}
	_, ref, _, err := gaps.EventFromDecision(decision)
	if err != nil {
		return err
	}
	receipt, err := signing.SignReceipt(request, written, ref.SHA256, time.Now(), keys...)
	if err != nil {
		return err
	}
	return os.WriteFile(r.out, receipt, 0o644)
}

// gateCall is eval and validate: flags, one input, one call, the result on
// stdout (JSON and a newline, or a text summary), and an exit code that
// says whether the result is one --fail-on names.
type gateCall struct {
	name, input string
	call        func(host.Evaluator, context.Context, []byte) ([]byte, error)
	text        func(out []byte, failed []string) (string, error)
	verdicts    func(out []byte) ([]string, error)
	failOn      *failOn
	failHelp    string
	receipt     *receiptFlags // eval only
}

func (c gateCall) run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ctxgate "+c.name, flag.ContinueOnError)
	var gf gateFlags
	var of outputFormat
	gf.register(fs)
	of.register(fs)
	fs.Var(c.failOn, "fail-on", c.failHelp)
	if c.receipt != nil {
		c.receipt.register(fs)
	}
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: ctxgate "+c.name+" [flags] ["+c.input+"|-]\n")
		fs.PrintDefaults()
		io.WriteString(fs.Output(), "\n"+exitCodesHelp)
	}
	if code, done := parseFlags(fs, args, stderr); done {
		return code
	}
	if fs.NArg() > 1 {
		io.WriteString(stderr, "ctxgate "+c.name+": one "+c.input+" at most, got "+quote(fs.Arg(1))+" too\n")
		return exitUsage
	}
	text, err := c.format(&of, stdout)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	if err := gf.check(); err != nil {
		return fail(stderr, c.name, err)
	}
	input, err := readInput(fs.Arg(0), stdin, host.DefaultMaxInputBytes)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	ctx := context.Background()
	ev, err := gf.open(ctx, stderr)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	defer ev.Close(ctx)
	out, err := c.call(ev, ctx, input)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	verdicts, err := c.verdicts(out)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	failed := c.failOn.matched(verdicts)
	written := append(out, '\n')
	if text {
		s, err := c.text(out, failed)
		if err != nil {
			return fail(stderr, c.name, err)
		}
		written = []byte(s)
	}
	if _, err := stdout.Write(written); err != nil {
		return fail(stderr, c.name, err)
	}
	if err := gf.logGap(out); err != nil {
		return fail(stderr, c.name, errors.New("gap log: "+err.Error()))
	}
	if c.receipt != nil && c.receipt.out != "" {
		if err := c.receipt.sign(input, out, written); err != nil {
			return fail(stderr, c.name, errors.New("receipt: "+err.Error()))
		}
	}
	if len(failed) > 0 {
		return exitVerdict
	}
	return exitOK
}

// format resolves --format. A receipt covers the JSON written, so with
// --receipt the default is JSON and --format text is refused.
func (c gateCall) format(of *outputFormat, stdout io.Writer) (text bool, err error) {
	if c.receipt != nil {
		if err := c.receipt.check(); err != nil {
			return false, usageError{err}
		}
		if c.receipt.out != "" {
			if of.value == "text" {
				return false, usageError{errors.New("--receipt covers the decision JSON written to stdout: use --format json (the default with --receipt)")}
			}
			of.value = "json"
		}
	}
	return of.text(stdout)
}
