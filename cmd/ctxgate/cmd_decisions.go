package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxgate/ctxgate/host/decisionlog"
)

func init() {
	register(command{name: "decisions", help: "decision logs: decisions join (decision log + feedback log -> calibration examples)", run: runDecisions})
}

const decisionsUsage = `usage:
  ctxgate decisions join --decisions FILE [--decisions FILE...] --feedback FILE [--feedback FILE...] [--out FILE] [--request-only] [--strict]

join pairs the decision log of ctxgate serve (--decision-log) with its feedback
log (--feedback-log) by decision id and writes one calibration example per
decision that has an answer_in_sources verdict: {"request": {...}, "label": 1|0}
plus the decision's outcome, as JSON lines (ctxgate calibrate reads them). A
FILE may be a glob ('decisions.jsonl*' for rotated logs). A malformed line (a
crash leaves one) is skipped and counted on stderr; --strict fails on it. See
docs/decision-log.md.
`

func runDecisions(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		io.WriteString(stderr, decisionsUsage)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		io.WriteString(stdout, decisionsUsage)
		return exitOK
	case "join":
		return runDecisionsJoin(args[1:], stdout, stderr)
	}
	io.WriteString(stderr, "ctxgate decisions: unknown subcommand "+quote(args[0])+" (join)\n")
	return exitUsage
}

func runDecisionsJoin(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ctxgate decisions join", flag.ContinueOnError)
	fs.Usage = func() {
		io.WriteString(fs.Output(), decisionsUsage+"\nflags:\n")
		fs.PrintDefaults()
	}
	var decisions, feedback signFileList
	fs.Var(&decisions, "decisions", "decision log `FILE` or glob (repeatable); required")
	fs.Var(&feedback, "feedback", "feedback log `FILE` or glob (repeatable); required")
	out := fs.String("out", "", "write the examples to `FILE` (default: stdout)")
	requestOnly := fs.Bool("request-only", false, "keep only examples whose request was logged whole (not masked, not left out)")
	strict := fs.Bool("strict", false, "fail on the first malformed line instead of skipping it (skipped lines are counted on stderr)")
	if code, done := parseFlags(fs, args, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		io.WriteString(stderr, "ctxgate decisions join: unexpected argument "+quote(fs.Arg(0))+"\n")
		return exitUsage
	}
	if len(decisions) == 0 || len(feedback) == 0 {
		return fail(stderr, "decisions join", usageError{errors.New("--decisions and --feedback are required")})
	}
	j, err := joinLogs(decisions, feedback, *strict)
	if err != nil {
		return fail(stderr, "decisions join", err)
	}
	examples, st := j.Examples()
	w := stdout
	var file *os.File
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return fail(stderr, "decisions join", err)
		}
		file, w = f, f
	}
	bw := bufio.NewWriter(w)
	var line []byte
	written := 0
	for i := range examples {
		if *requestOnly && examples[i].Request == nil {
			continue
		}
		line = decisionlog.AppendExample(line[:0], &examples[i])
		bw.Write(line)
		written++
	}
	err = bw.Flush()
	if file != nil {
		if serr := file.Sync(); err == nil {
			err = serr
		}
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fail(stderr, "decisions join", err)
	}
	fmt.Fprintf(stderr, "ctxgate decisions join: %d examples written (%d labeled 1, %d labeled 0, %d without their request) "+
		"from %d decisions and %d feedback lines; %d decisions rated without answer_in_sources, "+
		"%d feedback lines for decisions not in the logs, %d values replaced by later feedback",
		written, st.Positive, st.Negative, st.WithoutRequest, st.Decisions, st.FeedbackLines,
		st.RatingOnly, st.UnknownFeedback, st.Replaced)
	if *requestOnly {
		fmt.Fprintf(stderr, "; %d left out by --request-only", st.Examples-written)
	}
	io.WriteString(stderr, skippedLines(st)+"\n")
	return exitOK
}

// skippedLines says, for a summary line, which lines of the logs a join
// skipped: "" when none.
func skippedLines(st decisionlog.Stats) string {
	var s string
	if st.TornTails > 0 {
		s += fmt.Sprintf("; %d files ended in a partial line (skipped)", st.TornTails)
	}
	if st.Skipped > 0 {
		s += fmt.Sprintf("; %d malformed lines skipped (the first: %s)", st.Skipped, st.FirstErrors[0])
	}
	return s
}

// expand resolves globs; a name without glob characters must exist, and a
// glob must match something.
func expand(flagName string, names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		if !strings.ContainsAny(n, "*?[") {
			out = append(out, n)
			continue
		}
		m, err := filepath.Glob(n)
		if err != nil {
			return nil, usageError{errors.New(flagName + " " + quote(n) + ": " + err.Error())}
		}
		if len(m) == 0 {
			return nil, errors.New(flagName + " " + quote(n) + ": no file matches")
		}
		sort.Strings(m)
		out = append(out, m...)
	}
	return out, nil
}

// joinLogs reads every decision log, then every feedback log (globs
// expanded), into one Joiner: what `decisions join` writes and `calibrate
// --decisions --feedback` fits on. Malformed lines are skipped and counted
// unless strict.
func joinLogs(decisions, feedback []string, strict bool) (*decisionlog.Joiner, error) {
	j := decisionlog.NewJoiner()
	j.Strict = strict
	for _, set := range []struct {
		flag  string
		files []string
		add   func(string, io.Reader) error
	}{{"--decisions", decisions, j.AddDecisions}, {"--feedback", feedback, j.AddFeedback}} {
		paths, err := expand(set.flag, set.files)
		if err != nil {
			return nil, err
		}
		for _, path := range paths {
			if err := addFile(path, set.add); err != nil {
				return nil, err
			}
		}
	}
	return j, nil
}

func addFile(path string, add func(string, io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return add(path, f)
}
