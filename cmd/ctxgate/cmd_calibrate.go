package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/host/calibrate"
	"github.com/ctxgate/ctxgate/policies"
)

// Calibration to a deployment's own retriever and labeled questions
// (docs/calibration.md).
func init() {
	register(command{name: "calibrate", help: "fit a policy to labeled examples, with a stated bound on hallucination or error", run: runCalibrate})
}

// calibrateFlags are calibrate's command line.
type calibrateFlags struct {
	data             string
	decisions        signFileList
	feedback         signFileList
	maxHallucination float64
	maxError         float64
	confidence       float64
	base             string
	out              string
	reports          signFileList
	seed             uint64
	calShare         float64
	testShare        float64
	name, version    string
	noLevels         bool
	metric, scale    string
}

func runCalibrate(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ctxgate calibrate", flag.ContinueOnError)
	var f calibrateFlags
	fs.StringVar(&f.data, "data", "", "labeled examples `FILE`: one JSON object a line, {\"request\": {...}, \"label\": 1|0, \"group\": \"...\"}")
	fs.Var(&f.decisions, "decisions", "decision log `FILE` or glob (repeatable) of `ctxgate serve --decision-log --decision-log-request`, joined with --feedback instead of --data")
	fs.Var(&f.feedback, "feedback", "feedback log `FILE` or glob (repeatable) of `ctxgate serve --feedback-log`: its answer_in_sources verdicts are the labels")
	fs.Float64Var(&f.maxHallucination, "max-hallucination", 0, "bound `X` on the share of unanswerable examples (label 0) the gate answers")
	fs.Float64Var(&f.maxError, "max-error", 0, "bound `X` on the share of answerable examples (label 1) the gate withholds")
	fs.Float64Var(&f.confidence, "confidence", 0.9, "probability `C` that the bound holds on new data from the same source")
	fs.StringVar(&f.base, "base", "default", "policy to start from: a preset name ("+strings.Join(policies.Names(), ", ")+") or a policy `FILE`")
	fs.StringVar(&f.out, "out", "", "write the calibrated policy JSON to `FILE`")
	fs.Var(&f.reports, "report", "write the report to `FILE`: JSON when it ends in .json, else Markdown (repeatable)")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of the fit/calibration split and the cross-validation folds")
	fs.Float64Var(&f.calShare, "calibration-share", 0.7, "share of groups that choose the threshold (the rest fit the weights)")
	fs.Float64Var(&f.testShare, "test-share", 0, "share of groups held out to report on only")
	fs.StringVar(&f.name, "name", "", "name of the written policy (default: the base's)")
	fs.StringVar(&f.version, "version", "", "version of the written policy (default: the base's + \"-calibrated.\" + the UTC time, so later calibrations sort later)")
	fs.BoolVar(&f.noLevels, "no-levels", false, "leave the raw score levels (top_vector, top_bm25, top_sparse) out of the fit")
	fs.StringVar(&f.metric, "vector-metric", "", vectorMetricHelp+"; give the one serve applied when the decision log's requests state none")
	fs.StringVar(&f.scale, "rerank-scale", "", rerankScaleHelp)
	fs.Usage = func() {
		io.WriteString(stderr, "usage: ctxgate calibrate (--data EXAMPLES.jsonl | --decisions LOG --feedback LOG) (--max-hallucination X | --max-error X) [--confidence 0.9] [--base default] --out POLICY.json [--report REPORT.md]\n")
		fs.PrintDefaults()
	}
	if code, done := parseFlags(fs, args, stderr); done {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	opts, err := f.options(set)
	if err != nil {
		io.WriteString(stderr, "ctxgate calibrate: "+err.Error()+"\n")
		return exitUsage
	}
	logs := len(f.decisions) > 0 || len(f.feedback) > 0
	if fs.NArg() != 0 || f.out == "" || (f.data == "") == !logs {
		if f.data != "" && logs {
			io.WriteString(stderr, "ctxgate calibrate: give --data or --decisions/--feedback, not both\n")
		}
		fs.Usage()
		return exitUsage
	}
	var exs []calibrate.Example
	if logs {
		exs, err = readDecisionLogs(f.decisions, f.feedback, opts.Base, stderr)
	} else {
		exs, err = readExamplesFile(f.data, opts.Base)
	}
	if err != nil {
		return fail(stderr, "calibrate", err)
	}
	return calibrateAndWrite(exs, opts, &f, stdout, stderr)
}

// readDecisionLogs joins decision logs with feedback logs (as `ctxgate
// decisions join` does) into calibration examples. Only a decision whose
// request was logged whole can be calibrated from: the features are
// computed from its query and chunk text. The others are counted and left
// out, saying so. Examples asking the same question (the same words, case
// and spacing aside) share a group: a question asked twice never lands in
// both the fit and the calibration split, and counts once in the bound, so
// a popular question's repeats buy no guarantee.
func readDecisionLogs(decisions, feedback []string, base []byte, stderr io.Writer) ([]calibrate.Example, error) {
	if len(decisions) == 0 || len(feedback) == 0 {
		return nil, usageError{errors.New("--decisions and --feedback go together")}
	}
	p, err := gate.DecodePolicy(base)
	if err != nil {
		return nil, errors.New("--base: " + err.Error())
	}
	j, err := joinLogs(decisions, feedback, false)
	if err != nil {
		return nil, err
	}
	joined, st := j.Examples()
	if s := skippedLines(st); s != "" {
		io.WriteString(stderr, "ctxgate calibrate: warning: "+strings.TrimPrefix(s, "; ")+"\n")
	}
	var exs []calibrate.Example
	noRequest := 0
	for i := range joined {
		ex := &joined[i]
		if ex.Request == nil {
			noRequest++
			continue
		}
		req, err := gate.DecodeRequest(ex.Request, &p.Limits)
		if err != nil {
			return nil, errors.New("decision " + ex.DecisionID + ": request: " + err.Error())
		}
		if field, msg := calibrate.CheckRequest(req); msg != "" {
			return nil, errors.New("decision " + ex.DecisionID + ": request." + field + ": " + msg)
		}
		exs = append(exs, calibrate.Example{Request: req, Label: ex.Label == 1, Group: ex.Group, Line: i + 1})
	}
	if noRequest > 0 {
		io.WriteString(stderr, "ctxgate calibrate: left out "+strconv.Itoa(noRequest)+
			" decision(s) with a verdict but no whole request in the log (serve --decision-log-request, unmasked)\n")
	}
	return exs, nil
}

// options turns the flags into calibration options, reading --base.
func (f *calibrateFlags) options(set map[string]bool) (calibrate.Options, error) {
	o := calibrate.Options{Confidence: f.confidence, Seed: f.seed, CalibrationShare: f.calShare,
		TestShare: f.testShare, NoLevels: f.noLevels, Name: f.name, Version: f.version}
	switch {
	case set["max-hallucination"] && set["max-error"]:
		return o, errors.New("give --max-hallucination or --max-error, not both")
	case set["max-hallucination"]:
		o.Target, o.Alpha = calibrate.Hallucination, f.maxHallucination
	case set["max-error"]:
		o.Target, o.Alpha = calibrate.Error, f.maxError
	default:
		return o, errors.New("give the bound: --max-hallucination X or --max-error X")
	}
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return o, errors.New("the bound must be in (0,1), not " + strconv.FormatFloat(o.Alpha, 'g', -1, 64))
	}
	if !(o.Confidence > 0 && o.Confidence < 1) {
		return o, errors.New("--confidence must be in (0,1), not " + strconv.FormatFloat(o.Confidence, 'g', -1, 64))
	}
	gf := &gateFlags{policy: f.base, metric: f.metric, scale: f.scale}
	var err error
	if o.Defaults.VectorMetric, o.Defaults.RerankScale, err = gf.scoreConventions(); err != nil {
		return o, err
	}
	base, err := gf.loadPolicy()
	if err != nil {
		return o, errors.New("--base: " + err.Error())
	}
	if bundle.IsBundle(base) {
		return o, errors.New("--base " + quote(f.base) + " is a signed bundle: calibrate from the policy it signs, then sign the result")
	}
	o.Base = base
	return o, nil
}

// readExamplesFile reads labeled examples, decoding each request under the
// base policy's limits; an error names the file and line.
func readExamplesFile(name string, base []byte) ([]calibrate.Example, error) {
	p, err := gate.DecodePolicy(base)
	if err != nil {
		return nil, errors.New("--base: " + err.Error())
	}
	file, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	exs, err := calibrate.ReadExamples(file, &p.Limits)
	if err != nil {
		return nil, errors.New(name + ": " + err.Error())
	}
	return exs, nil
}

// calibrateAndWrite calibrates and writes the policy and the reports, or
// nothing: every output is rendered first, then each is written to a
// temporary file beside its path and renamed into place. The examples may
// come from --data or from any other reader of []calibrate.Example.
func calibrateAndWrite(exs []calibrate.Example, opts calibrate.Options, f *calibrateFlags, stdout, stderr io.Writer) int {
	if opts.Version == "" {
		p, err := gate.DecodePolicy(opts.Base)
		if err != nil {
			return fail(stderr, "calibrate", err)
		}
		opts.Version = p.Version + "-calibrated." + time.Now().UTC().Format("20060102.150405")
	}
	res, err := calibrate.Calibrate(exs, opts)
	if err != nil {
		if errors.Is(err, calibrate.ErrNoGuarantee) {
			io.WriteString(stderr, "ctxgate calibrate: "+err.Error()+"\nctxgate calibrate: no policy written\n")
			return exitFail
		}
		return fail(stderr, "calibrate", err)
	}
	outputs := []struct {
		path string
		data []byte
	}{{f.out, res.Policy}}
	for _, r := range f.reports {
		var b bytes.Buffer
		if strings.EqualFold(filepath.Ext(r), ".json") {
			err = res.Report.WriteJSON(&b)
		} else {
			err = res.Report.WriteMarkdown(&b)
		}
		if err != nil {
			return fail(stderr, "calibrate", err)
		}
		outputs = append(outputs, struct {
			path string
			data []byte
		}{r, b.Bytes()})
	}
	var tmps []string
	defer func() {
		for _, t := range tmps {
			os.Remove(t)
		}
	}()
	for _, o := range outputs {
		t, err := writeTemp(o.path, o.data)
		if err != nil {
			return fail(stderr, "calibrate", err)
		}
		tmps = append(tmps, t)
	}
	for i, o := range outputs {
		if err := os.Rename(tmps[i], o.path); err != nil {
			return fail(stderr, "calibrate", err)
		}
	}
	tmps = nil
	rep := res.Report
	io.WriteString(stdout, rep.Bound.Statement+"\n")
	io.WriteString(stdout, "wrote "+f.out+" ("+rep.Policy.Name+" "+rep.Policy.Version+")")
	for _, r := range f.reports {
		io.WriteString(stdout, ", "+r)
	}
	io.WriteString(stdout, "\n")
	return exitOK
}

// writeTemp writes data to a new temporary file in path's directory.
func writeTemp(path string, data []byte) (string, error) {
	t, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return "", err
	}
	_, err = t.Write(data)
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(t.Name(), 0o644)
	}
	if err != nil {
		os.Remove(t.Name())
		return "", err
	}
	return t.Name(), nil
}
