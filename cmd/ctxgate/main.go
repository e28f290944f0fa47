// Command ctxgate is the CLI over the host library. Each subcommand lives in
// its own file, cmd_<name>.go, and registers itself in init, so features are
// added without touching this file.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/gate/wire"
	"github.com/ctxgate/ctxgate/host"
	"github.com/ctxgate/ctxgate/host/gaps"
	"github.com/ctxgate/ctxgate/host/signing"
	"github.com/ctxgate/ctxgate/internal/jsonl"
	"github.com/ctxgate/ctxgate/policies"
)

// Exit codes every subcommand uses (exitCodesHelp says them to users).
const (
	exitOK      = 0
	exitFail    = 1 // the work failed: bad input (a gate error), a fault, I/O
	exitUsage   = 2 // the command line was wrong
	exitVerdict = 3 // the result is one --fail-on names (eval, validate)
)

const exitCodesHelp = `exit codes:
  0  success
  1  failure: bad input (the gate's error), a policy that does not load or
     verify, a signature or receipt that does not verify, I/O
  2  bad command line
  3  the result is one --fail-on names: eval's action (--fail-on
     refuse,fallback), or an answer validate fails (by default a soft
     refusal or an unknown citation)
`

// command is one subcommand. run gets the arguments after the subcommand
// name and returns the exit code; it never calls os.Exit, so tests run it
// in-process.
type command struct {
	name string
	help string // one line, shown by `ctxgate help`
	run  func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

// register adds a subcommand; called from each cmd_<name>.go's init.
// A duplicate name is a programming error caught by the first test run.
func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("ctxgate: command " + c.name + " registered twice")
	}
	commands[c.name] = c
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to a subcommand.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	case "-version", "--version":
		return runVersion(args[1:], stdin, stdout, stderr)
	}
	c, ok := commands[args[0]]
	if !ok {
		io.WriteString(stderr, "ctxgate: unknown command "+quote(args[0])+" (see ctxgate help)\n")
		return exitUsage
	}
	return c.run(args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer) {
	names := make([]string, 0, len(commands))
	width := 0
	for n := range commands {
		names = append(names, n)
		width = max(width, len(n))
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("ctxgate: a deterministic retrieval-confidence gate for RAG\n\nusage: ctxgate <command> [flags] [args]\n\ncommands:\n")
	for _, n := range names {
		b.WriteString("  " + n + strings.Repeat(" ", width-len(n)) + "  " + commands[n].help + "\n")
	}
	b.WriteString("\nFlags may come before or after arguments. Run ctxgate <command> -h for a\ncommand's flags.\n\n" + exitCodesHelp)
	io.WriteString(w, b.String())
}

func quote(s string) string {
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return "\"" + s + "\""
}

// ---- Shared by the subcommands that run the gate (eval, validate, and any
// other that wants the same flags). ----

// gateFlags are the flags that choose and configure the gate.
type gateFlags struct {
	policy   string
	native   bool
	module   string
	wasm     string
	timeout  time.Duration
	maxPages uint
	cacheDir string
	trust    signFileList // --trust: load only policies these keys sign
	trustMod string       // --trust-mode: the signatures a bundle needs
	minVer   string       // --min-version: refuse an older policy
	gapLog   string       // --gap-log: append gap events here (JSONL)
	metric   string       // --vector-metric: the score conventions of requests that state none
	scale    string       // --rerank-scale
}

func (f *gateFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.policy, "policy", "", "policy JSON `FILE` or signed bundle, or a preset NAME ("+strings.Join(policies.Names(), ", ")+"; ctxgate policies); default: the built-in default")
	fs.BoolVar(&f.native, "native", false, "run the core natively instead of in Wasm (for comparison)")
	fs.StringVar(&f.module, "module", "tinygo", "embedded module: tinygo or go")
	fs.StringVar(&f.wasm, "wasm", "", "run this module `FILE` instead of an embedded one")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "deadline for the call")
	fs.UintVar(&f.maxPages, "max-pages", 1024, "memory cap per Wasm memory, in 64 KiB pages")
	fs.StringVar(&f.cacheDir, "cache-dir", defaultCacheDir(), "compiled-module cache `DIR` (\"\": compile every run)")
	fs.Var(&f.trust, "trust", "trust `FILE` of public keys (repeatable, for rotation): the policy must be a bundle they sign")
	fs.StringVar(&f.trustMod, "trust-mode", "", trustModeHelp)
	fs.StringVar(&f.minVer, "min-version", "", "refuse a policy whose version sorts before `V` (as verify --min-version)")
	fs.StringVar(&f.gapLog, "gap-log", "", "append the knowledge-gap event, if any, to this JSONL `FILE` (read by ctxgate gaps)")
	fs.StringVar(&f.metric, "vector-metric", "", vectorMetricHelp)
	fs.StringVar(&f.scale, "rerank-scale", "", rerankScaleHelp)
}

// The help of --vector-metric and --rerank-scale (eval, validate, serve).
const (
	vectorMetricHelp = "how the requests' scores.vector were measured, unless a request says (its vector_metric): `METRIC` cosine (the default), dot, l2, l2_squared, cosine_distance or negative_dot (docs/decision.md has each vector store's)"
	rerankScaleHelp  = "what the requests' scores.rerank are, unless a request says (its rerank_scale): `SCALE` probability or logit (default: logits when any is outside [0,1])"
)

// scoreConventions reads --vector-metric and --rerank-scale; an unknown
// name is a usage error.
func (f *gateFlags) scoreConventions() (gate.VectorMetric, gate.RerankScale, error) {
	var m gate.VectorMetric
	var r gate.RerankScale
	if f.metric != "" {
		var ok bool
		if m, ok = wire.ParseVectorMetric(f.metric); !ok {
			return "", "", usageError{errors.New("--vector-metric: unknown metric " + quote(f.metric) + " (want cosine, dot, l2, l2_squared, cosine_distance or negative_dot)")}
		}
	}
	if f.scale != "" {
		var ok bool
		if r, ok = wire.ParseRerankScale(f.scale); !ok {
			return "", "", usageError{errors.New("--rerank-scale: unknown scale " + quote(f.scale) + " (want probability or logit)")}
		}
	}
	return m, r, nil
}

// defaultCacheDir keeps compiled machine code between runs, so a CLI call
// does not pay for compiling the module each time.
func defaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "ctxgate", "wazero")
}

// check reports flag combinations that cannot work, before any input is
// read.
func (f *gateFlags) check() error {
	if _, err := parseTrustMode(f.trustMod, len(f.trust) > 0); err != nil {
		return err
	}
	_, _, err := f.scoreConventions()
	return err
}

// open builds the evaluator the flags ask for. A usage problem (unknown
// module) is reported as such, so the caller can exit 2.
func (f *gateFlags) open(ctx context.Context, stderr io.Writer) (host.Evaluator, error) {
	if f.policy == "" && len(f.trust) > 0 {
		return nil, errors.New("--trust is set but --policy is not: a signed bundle is required (the built-in default is not signed)")
	}
	mode, err := parseTrustMode(f.trustMod, len(f.trust) > 0)
	if err != nil {
		return nil, err
	}
	policy, err := f.loadPolicy()
	if err != nil {
		return nil, err
	}
	var trust []bundle.PublicKey
	if len(f.trust) > 0 {
		if trust, err = signing.ReadTrust(f.trust...); err != nil {
			return nil, err
		}
	}
	metric, scale, err := f.scoreConventions()
	if err != nil {
		return nil, err
	}
	var ev host.Evaluator
	if f.native {
		// The Wasm path verifies inside the sandbox; natively the same
		// rules run here, so --native refuses what the module refuses.
		o := host.Options{Policy: policy, TrustKeys: marshalTrust(trust), TrustMode: mode, VectorMetric: metric, RerankScale: scale}
		if ev, err = host.NewNativeOptions(o); err != nil {
			return nil, err
		}
	} else {
		opts := host.Options{Policy: policy, TrustKeys: marshalTrust(trust), TrustMode: mode, PoolSize: 1, Timeout: f.timeout, MaxPages: uint32(min(f.maxPages, 65536)), CacheDir: f.cacheDir,
			Logger: slog.New(slog.NewTextHandler(stderr, nil)), VectorMetric: metric, RerankScale: scale}
		if f.wasm != "" {
			if opts.Wasm, err = os.ReadFile(f.wasm); err != nil {
				return nil, err
			}
		} else if opts.Module, err = host.ParseModule(f.module); err != nil {
			return nil, usageError{err}
		}
		if ev, err = host.New(ctx, opts); err != nil {
			return nil, err
		}
	}
	if err := f.checkVersion(ctx, ev); err != nil {
		ev.Close(ctx)
		return nil, err
	}
	return ev, nil
}

// checkVersion applies --min-version to the policy the evaluator loaded
// (after the module verified it, so the version is the signed one).
func (f *gateFlags) checkVersion(ctx context.Context, ev host.Evaluator) error {
	if f.minVer == "" {
		return nil
	}
	desc, err := ev.Describe(ctx)
	if err != nil {
		return err
	}
	var d struct {
		Policy struct{ Name, Version string } `json:"policy"`
	}
	if err := json.Unmarshal(desc, &d); err != nil {
		return errors.New("describe: " + err.Error())
	}
	switch {
	case d.Policy.Version == "":
		return errors.New("policy " + d.Policy.Name + " has no version, and --min-version " + f.minVer + " is set")
	case bundle.CompareVersions(d.Policy.Version, f.minVer) < 0:
		return errors.New("policy version " + d.Policy.Version + " is older than --min-version " + f.minVer + " (replay of an older policy?)")
	}
	return nil
}

const trustModeHelp = "signatures a signed policy needs: hybrid (Ed25519 and ML-DSA-65; the default), ed25519 or ml-dsa-65 (alias ml-dsa), for single-scheme keys; needs --trust"

// parseTrustMode reads --trust-mode. A mode without --trust is a usage
// error: the user believes signatures are checked when nothing is.
func parseTrustMode(v string, haveTrust bool) (bundle.Mode, error) {
	m, err := bundle.ParseMode(v)
	if err != nil {
		return m, usageError{errors.New("--trust-mode: unknown mode " + quote(v) + " (want hybrid, ed25519 or ml-dsa-65)")}
	}
	if v != "" && !haveTrust {
		return m, usageError{errors.New("--trust-mode needs --trust: without trust keys nothing is verified")}
	}
	return m, nil
}

func marshalTrust(keys []bundle.PublicKey) []byte {
	if keys == nil {
		return nil
	}
	return signing.MarshalPublicKeys(keys)
}

// logGap appends the gap event of a decision or validation to --gap-log, with
// fsync: a refusal is the record of what the knowledge base lacks, so it must
// survive a crash right after the command returns.
func (f *gateFlags) logGap(out []byte) error {
	if f.gapLog == "" {
		return nil
	}
	ev, ref, ok, err := gaps.EventFromDecision(out)
	if err != nil || !ok {
		return err
	}
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	line := gaps.AppendEventLine(nil, ev, time.Now(), hex.EncodeToString(id[:]), ref)
	// Whole or not at all, after cutting a line a crash left torn.
	return jsonl.AppendLine(f.gapLog, line)
}

// loadPolicy reads --policy (readPolicyArg); "" is the built-in default.
func (f *gateFlags) loadPolicy() ([]byte, error) {
	if f.policy == "" {
		return nil, nil
	}
	return readPolicyArg(f.policy)
}

// usageError marks an error as the command line's fault (exit 2).
type usageError struct{ error }

// readInput reads the named file, or stdin for "" and "-", refusing more than
// limit bytes without holding them.
func readInput(name string, stdin io.Reader, limit int) ([]byte, error) {
	r := stdin
	if name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, errors.New("input is larger than " + strconv.Itoa(limit) + " bytes")
	}
	return b, nil
}

// fail prints err as one line on stderr and returns its exit code. Gate
// errors read "code: field: message"; a trap's wasm stack trace is cut to its
// first line.
func fail(stderr io.Writer, cmd string, err error) int {
	code := exitFail
	var ue usageError
	if errors.As(err, &ue) {
		code = exitUsage
	}
	msg := strings.TrimPrefix(err.Error(), "ctxgate: ")
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	io.WriteString(stderr, "ctxgate "+cmd+": "+msg+"\n")
	return code
}
