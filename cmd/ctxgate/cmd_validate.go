package main

import (
	"io"

	"github.com/ctxgate/ctxgate/host"
)

func init() {
	register(command{name: "validate", help: "check a model's answer against its tags; prints the validation JSON", run: runValidate})
}

func runValidate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runGateCall("validate", "ANSWER.json", args, stdin, stdout, stderr, host.Evaluator.Validate, nil)
}
