package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/host"
	"github.com/ctxgate/ctxgate/host/gaps"
	"github.com/ctxgate/ctxgate/host/gaps/gatejudge"
)

func init() {
	register(command{name: "gaps", help: "knowledge-gap backlog: gaps report (cluster, rank, diagnose) and gaps verify (re-run past queries)", run: runGaps})
}

const gapsUsage = `usage:
  ctxgate gaps report --events FILE.jsonl [--events MORE...] [FILE...] [--format md|json|html] [--min-count N] [flags]
  ctxgate gaps verify --events FILE.jsonl --retrieval NEW.jsonl [--policy P] [--judge gate|scores] [flags]

report clusters gap events (refusals, low-confidence answers, thumbs-down) by
query similarity, ranks the clusters by count and says each one's failure mode
and fix (--format html: one self-contained page with charts). verify re-runs each cluster's past queries against new retrieval
results through the gate and counts how many now clear. Events are read once,
in order, from every file (globs, gzip, - for stdin), in bounded memory:
the logs of several replicas make one report. See docs/gaps.md.
Run ctxgate gaps report -h or ctxgate gaps verify -h for flags.
`

func runGaps(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		io.WriteString(stderr, gapsUsage)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		io.WriteString(stdout, gapsUsage)
		return exitOK
	case "report":
		return runGapsReport(args[1:], stdin, stdout, stderr)
	case "verify":
		return runGapsVerify(args[1:], stdin, stdout, stderr)
	}
	io.WriteString(stderr, "ctxgate gaps: unknown subcommand "+quote(args[0])+" (report or verify)\n")
	return exitUsage
}

// gapsFlags are the flags report and verify share: which events, how to read
// them, how to cluster and diagnose.
type gapsFlags struct {
	events   eventsFlag
	format   string
	minCount int
	skipBad  bool
	maxLine  int
	opt      gaps.Options
	stream   gaps.StreamOptions
}

func (f *gapsFlags) register(fs *flag.FlagSet) {
	f.opt = gaps.DefaultOptions()
	th := &f.opt.Thresholds
	fs.Var(&f.events, "events", "gap events `FILE` (JSONL, gzip or not; a glob; - for stdin); repeatable, read in order; required")
	fs.StringVar(&f.format, "format", "md", "output format: md or json (report: also html, one self-contained page)")
	fs.IntVar(&f.minCount, "min-count", 1, "show only clusters with at least `N` events")
	fs.BoolVar(&f.skipBad, "skip-bad", true, "skip malformed lines, counted on stderr and in the report (a crash or a full disk leaves one); false: fail on the first")
	fs.IntVar(&f.maxLine, "max-line-bytes", gaps.DefaultMaxLineBytes, "longest accepted line, in bytes")
	fs.Float64Var(&f.opt.Cosine, "cosine", f.opt.Cosine, "embedding cosine at or above which two queries share a cluster")
	fs.Float64Var(&f.opt.Jaccard, "jaccard", f.opt.Jaccard, "term-set Jaccard at or above which two queries share a cluster (when one has no embedding)")
	fs.Float64Var(&f.opt.Chars, "chars", f.opt.Chars, "character 3-gram Jaccard at or above which two queries share a cluster (when one has no embedding)")
	fs.Float64Var(&f.opt.Guard, "guard", f.opt.Guard, "two gaps join only if every pair of their most asked wordings has term or character Jaccard, plus 0.15 for shared retrieved documents, at least this (higher: fewer, purer merges)")
	fs.IntVar(&f.stream.ChunkEvents, "chunk-events", gaps.DefaultChunkEvents, "events held in memory at once; a longer log is clustered chunk by chunk (docs/gaps.md)")
	fs.IntVar(&f.stream.MaxGaps, "max-gaps", gaps.DefaultMaxGaps, "gaps carried from chunk to chunk; past it the smallest are dropped and counted")
	fs.Float64Var(&th.Floor, "floor", th.Floor, "the policy's evidence floor, for the diagnosis (and for --judge scores)")
	fs.Float64Var(&th.Near, "near", th.Near, "how far under the floor still counts as almost_matched")
	fs.Float64Var(&th.LowConfidence, "low-confidence", th.LowConfidence, "the low-confidence line, for the diagnosis")
}

// gapsMemoryLimit is the soft heap limit of gaps report and verify.
const gapsMemoryLimit = 640 << 20

// gapsLoad is what load read and built.
type gapsLoad struct {
	rep *gaps.Report
	// events are the events when the log fitted in one chunk (the HTML
	// trend reads them); nil for a streamed report, which counts its own.
	events []gaps.Event
	paths  []string
}

// load reads the events of every input in order and builds the report.
// more are a report's file arguments; formats are the formats the
// subcommand writes.
func (f *gapsFlags) load(cmd string, more []string, stdin io.Reader, stderr io.Writer, formats ...string) (*gapsLoad, error) {
	if len(f.events)+len(more) == 0 {
		return nil, usageError{errors.New("--events is required")}
	}
	if !slices.Contains(formats, f.format) {
		n := len(formats) - 1
		return nil, usageError{errors.New("--format must be " + strings.Join(formats[:n], ", ") + " or " + formats[n] + ", got " + quote(f.format))}
	}
	paths, err := eventPaths(append(append([]string(nil), f.events...), more...))
	if err != nil {
		return nil, err
	}
	s, err := gaps.NewStream(f.opt, f.stream)
	if err != nil {
		return nil, usageError{err}
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// The stream's live memory is bounded (docs/gaps.md); the limit makes
		// the collector hold the heap near it instead of letting garbage
		// double it. GOMEMLIMIT overrides.
		debug.SetMemoryLimit(gapsMemoryLimit)
	}
	l := &gapsLoad{paths: paths}
	var notes []string
	skipped := 0
	var first *gaps.LineError
	firstIn := ""
	for _, p := range paths {
		r, closeFn, err := openEvents(p, stdin)
		if err != nil {
			return nil, err
		}
		st, err := gaps.ScanEvents(r, gaps.ReadOptions{Strict: !f.skipBad, MaxLineBytes: f.maxLine, TornTail: true}, s.Add)
		closeFn()
		if err != nil {
			return nil, errors.New(p + ": " + err.Error())
		}
		if st.TornLast > 0 {
			io.WriteString(stderr, "ctxgate "+cmd+": warning: skipped the last line of "+p+" (line "+strconv.Itoa(st.TornLast)+
				"): it has no newline and does not read, a write cut short (a crash or a full disk); every line before it was read\n")
		}
		if st.Skipped > 0 && first == nil {
			first, firstIn = st.FirstErrors[0], p
		}
		skipped += st.Skipped
	}
	if skipped > 0 {
		msg := "skipped " + strconv.Itoa(skipped) + " malformed lines of " + paths[0] + "; first: " + first.Error()
		if len(paths) > 1 {
			msg = "skipped " + strconv.Itoa(skipped) + " malformed lines in " + strconv.Itoa(len(paths)) + " inputs; first: " + firstIn + ": " + first.Error()
		}
		io.WriteString(stderr, "ctxgate "+cmd+": "+msg+"\n")
		notes = append(notes, "Malformed lines were left out: "+msg+".")
	}
	l.rep, err = s.Report()
	if err != nil {
		return nil, usageError{err}
	}
	l.events = s.Events()
	if st := &l.rep.Stats; st.DroppedGaps > 0 {
		msg := "to bound memory, the " + strconv.Itoa(st.DroppedGaps) + " smallest gaps (" + strconv.Itoa(st.DroppedEvents) +
			" events) were dropped; raise --max-gaps to keep more"
		io.WriteString(stderr, "ctxgate "+cmd+": "+msg+"\n")
		notes = append(notes, "Not shown: "+msg+".")
	}
	l.rep.Notes = append(l.rep.Notes, notes...)
	l.rep.Filter(f.minCount)
	return l, nil
}

func openInput(name string, stdin io.Reader) (io.Reader, func(), error) {
	if name == "-" {
		return stdin, func() {}, nil
	}
	fh, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	return fh, func() { fh.Close() }, nil
}

func newGapsFlagSet(name, usageLine string) *flag.FlagSet {
	fs := flag.NewFlagSet("ctxgate gaps "+name, flag.ContinueOnError)
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: ctxgate gaps "+name+" "+usageLine+"\n")
		fs.PrintDefaults()
	}
	return fs
}

func runGapsReport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newGapsFlagSet("report", "--events FILE.jsonl [flags]")
	var gf gapsFlags
	gf.register(fs)
	maxClusters := fs.Int("max-clusters", gaps.DefaultMaxHTMLClusters, "html: show at most `N` gaps, highest ranked first (the page says how many it left out)")
	if code, done := parseFlags(fs, args, stderr); done {
		return code
	}
	l, err := gf.load("gaps report", fs.Args(), stdin, stderr, "md", "json", "html")
	if err != nil {
		return fail(stderr, "gaps report", err)
	}
	switch gf.format {
	case "json":
		err = gaps.WriteJSON(stdout, l.rep)
	case "html":
		opt := gaps.HTMLOptions{Source: sourceName(l.paths), MaxClusters: *maxClusters, Notes: l.rep.Notes}
		err = gaps.WriteHTML(stdout, l.rep, l.events, opt)
	default:
		err = gaps.WriteMarkdown(stdout, l.rep)
	}
	if err != nil {
		return fail(stderr, "gaps report", err)
	}
	return exitOK
}

func runGapsVerify(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newGapsFlagSet("verify", "--events FILE.jsonl --retrieval NEW.jsonl [flags]")
	var gf gapsFlags
	gf.register(fs)
	var gate gateFlags
	gate.register(fs)
	retrieval := fs.String("retrieval", "", "retrieval `FILE` (JSONL): one gate request per past query, retrieved from the new corpus; required")
	judge := fs.String("judge", "gate", "gate: decide each request with the policy (Wasm, or --native); scores: only check the best chunk score against --floor")
	strict := fs.Bool("strict", false, "exit 1 unless every past query has a retrieval line and now clears (a CI regression gate)")
	if code, done := parseFlags(fs, args, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		io.WriteString(stderr, "ctxgate gaps verify: unexpected argument "+quote(fs.Arg(0))+"\n")
		return exitUsage
	}
	if *retrieval == "" {
		return fail(stderr, "gaps verify", usageError{errors.New("--retrieval is required")})
	}
	if *judge != "gate" && *judge != "scores" {
		return fail(stderr, "gaps verify", usageError{errors.New("--judge must be gate or scores, got " + quote(*judge))})
	}
	if *retrieval == "-" && slices.Contains(gf.events, "-") {
		return fail(stderr, "gaps verify", usageError{errors.New("--events and --retrieval cannot both be stdin")})
	}
	l, err := gf.load("gaps verify", nil, stdin, stderr, "md", "json")
	if err != nil {
		return fail(stderr, "gaps verify", err)
	}
	rep := l.rep
	r, closeFn, err := openInput(*retrieval, stdin)
	if err != nil {
		return fail(stderr, "gaps verify", err)
	}
	defer closeFn()
	rts, st, err := gaps.ReadRetrievals(r, gaps.ReadOptions{Strict: !gf.skipBad, MaxLineBytes: max(gf.maxLine, host.DefaultMaxInputBytes)})
	if err != nil {
		return fail(stderr, "gaps verify", errors.New(*retrieval+": "+err.Error()))
	}
	if st.Skipped > 0 {
		io.WriteString(stderr, "ctxgate gaps verify: skipped "+strconv.Itoa(st.Skipped)+" malformed lines of "+*retrieval+"; first: "+st.FirstErrors[0].Error()+"\n")
	}

	var j gaps.Judge = gaps.ScoreJudge{Floor: gf.opt.Thresholds.Floor}
	if *judge == "gate" {
		ctx := context.Background()
		ev, err := gate.open(ctx, stderr)
		if err != nil {
			return fail(stderr, "gaps verify", err)
		}
		defer ev.Close(ctx)
		j = gatejudge.New(describeJudge(ctx, ev, &gate), func(req []byte) ([]byte, error) { return ev.Evaluate(ctx, req) })
	}
	res, err := gaps.Verify(rep, rts, j, gaps.VerifyOptions{SkipErrors: gf.skipBad})
	if err != nil {
		return fail(stderr, "gaps verify", errors.New(*retrieval+": "+err.Error()))
	}
	if gf.format == "json" {
		err = gaps.WriteVerifyJSON(stdout, res)
	} else {
		err = gaps.WriteVerifyMarkdown(stdout, res)
	}
	if err != nil {
		return fail(stderr, "gaps verify", err)
	}
	if *strict && !res.AllCleared() {
		io.WriteString(stderr, "ctxgate gaps verify: "+strconv.Itoa(res.Totals.Failing)+" queries still fail, "+
			strconv.Itoa(res.Totals.Missing)+" have no retrieval line, "+strconv.Itoa(res.Totals.Errors)+" were rejected\n")
		return exitFail
	}
	return exitOK
}

// describeJudge names the judge by the policy the evaluator loaded and where
// it runs, so a verification report says what it was checked against.
func describeJudge(ctx context.Context, ev host.Evaluator, gf *gateFlags) string {
	where := "wasm " + gf.module
	if gf.native {
		where = "native"
	} else if gf.wasm != "" {
		where = "wasm " + gf.wasm
	}
	name := "policy"
	if b, err := ev.Describe(ctx); err == nil {
		var d struct {
			Policy struct{ Name, Version string } `json:"policy"`
		}
		if json.Unmarshal(b, &d) == nil && d.Policy.Name != "" {
			name = d.Policy.Name + "@" + d.Policy.Version
		}
	}
	return "gate " + name + " (" + where + ")"
}
