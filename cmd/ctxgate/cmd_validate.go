package main

import (
	"io"
	"strings"

	"github.com/ctxgate/ctxgate/host"
)

func init() {
	register(command{name: "validate", help: "check a model's answer against its tags: the validation as JSON or a text summary", run: runValidate})
}

func runValidate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return gateCall{
		name: "validate", input: "ANSWER.json",
		call:     host.Evaluator.Validate,
		text:     validationText,
		verdicts: validationVerdicts,
		failOn:   newFailOn(validationChecks, "soft_refusal", "unknown"),
		failHelp: "exit 3 when the answer fails one of these checks, comma-separated: " + strings.Join(validationChecks, ", ") + "",
	}.run(args, stdin, stdout, stderr)
}
