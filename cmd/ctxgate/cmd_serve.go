package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ctxgate/ctxgate/host"
	"github.com/ctxgate/ctxgate/host/server"
)

func init() {
	register(command{name: "serve", help: "run the gate as an HTTP API and OpenAI-compatible gateway (docs/server.md)", run: runServe})
}

// runServe reads the YAML config (if any), lets flags override it, and
// serves until SIGTERM or SIGINT; SIGHUP reloads the policy.
func runServe(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ctxgate serve", flag.ContinueOnError)
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: ctxgate serve [--config ctxgate.yaml] [flags]\n\nFlags override the config file.\n")
		fs.PrintDefaults()
	}
	config := fs.String("config", "", "YAML config `FILE` (examples/serve/ctxgate.yaml)")
	var fc server.FileConfig
	var trust signFileList
	var shutdownTimeout time.Duration
	fs.StringVar(&fc.Listen, "listen", "127.0.0.1:8080", "listen `ADDR`")
	fs.StringVar(&fc.Policy, "policy", "", "policy JSON `FILE`, signed bundle, or preset name")
	fs.Var(&trust, "trust", "trust `FILE` of public keys (repeatable): load only policies they sign")
	fs.StringVar(&fc.TrustMode, "trust-mode", "", trustModeHelp+" (config: trust_mode)")
	fs.StringVar(&fc.MinVersion, "min-version", "", "refuse a policy whose version sorts before `V`, at start and on reload (with --trust, never older than the highest signed version loaded either: --state-dir)")
	fs.StringVar(&fc.StateDir, "state-dir", "", "with --trust, keep the highest signed policy version loaded in `DIR` and refuse older ones after a restart (default: the policy file's directory)")
	fs.StringVar(&fc.Module, "module", "tinygo", "embedded module: tinygo or go")
	fs.StringVar(&fc.VectorMetric, "vector-metric", "", vectorMetricHelp+" (config: vector_metric)")
	fs.StringVar(&fc.RerankScale, "rerank-scale", "", rerankScaleHelp+" (config: rerank_scale)")
	native := fs.Bool("native", false, "run the core natively instead of in Wasm (comparison only)")
	interrupt := fs.String("interrupt", "auto", "can a gate deadline stop a running call: `auto` (a --wasm module yes, the bundled ones run without wazero's termination checks, 4-8x faster), always, never (docs/performance.md)")
	wasm := fs.String("wasm", "", "run this module `FILE` instead of an embedded one")
	fs.IntVar(&fc.PoolSize, "pool-size", 0, "Wasm instances (0: GOMAXPROCS)")
	fs.StringVar(&fc.Upstream, "upstream", "", "OpenAI-compatible base `URL` for gateway mode (POST /v1/chat/completions)")
	fs.BoolVar(&fc.FailOpen, "fail-open", false, "gateway: pass requests the gate cannot decide upstream unchanged")
	fs.StringVar(&fc.GapLog, "gap-log", "", "append knowledge-gap events to this JSONL `FILE` (reopened on SIGHUP)")
	fs.Int64Var(&fc.GapLogMaxBytes, "gap-log-max-bytes", 0, "rotate the gap log at this many `BYTES` to FILE.1, FILE.2, ... (0: 64 MiB; -1: never)")
	fs.IntVar(&fc.GapLogKeep, "gap-log-keep", 0, "rotated gap logs kept (0: 5)")
	applyDecisionLog := decisionLogFlags(fs, &fc.DecisionLogConfig)
	fs.StringVar(&fc.DocumentsPath, "documents-path", "", "gateway: dotted path of the documents array (default documents)")
	fs.StringVar(&fc.QueryPath, "query-path", "", "gateway: dotted path of the question (default: the last user message)")
	fs.StringVar(&fc.CaveatDelivery, "caveat-delivery", "", "gateway: how a caveat reaches the user: `MODE` prefix (default), suffix, instruction, none")
	fs.StringVar(&fc.AccessLog, "access-log", "", "one JSON line per request to `DEST`: stdout (default), stderr, off, or a file (reopened on SIGHUP)")
	fs.Int64Var(&fc.AccessLogMaxBytes, "access-log-max-bytes", 0, "rotate an access log file at this many `BYTES` (0: 64 MiB; -1: never)")
	fs.IntVar(&fc.AccessLogKeep, "access-log-keep", 0, "rotated access log files kept (0: 5)")
	fs.Int64Var(&fc.Limits.MaxBodyBytes, "max-body-bytes", 0, "largest request body (0: 8 MiB)")
	fs.Int64Var(&fc.Limits.MaxInflightBodyBytes, "max-inflight-body-bytes", 0, "most `BYTES` of request bodies and upstream answers held in memory at once; past it, 503 (0: 64 MiB; -1: no bound)")
	fs.Int64Var(&fc.Limits.LargeBodyBytes, "large-body-bytes", 0, "gate inputs over this many `BYTES` run in the large-request lane: termination checks, limited concurrency (0: 256 KiB; -1: no lane)")
	fs.IntVar(&fc.Limits.LargeConcurrency, "large-concurrency", 0, "calls at once in the large-request lane (0: GOMAXPROCS-1, at least 1)")
	durFlag(fs, &fc.Limits.ReadTimeout, "read-timeout", "time to read a whole request (0: 30s)")
	durFlag(fs, &fc.Limits.WriteTimeout, "write-timeout", "time to write a response (0: 120s; a stream extends it per chunk)")
	durFlag(fs, &fc.Limits.GateTimeout, "gate-timeout", "deadline of one gate call (0: 1s)")
	durFlag(fs, &fc.Limits.UpstreamTimeout, "upstream-timeout", "time until the upstream's response headers (0: 120s)")
	durFlag(fs, &fc.Limits.UpstreamIdleTimeout, "upstream-idle-timeout", "longest wait for more of the upstream's body, and in a stream for each complete event (0: the write timeout)")
	tracing := fs.Bool("tracing", false, "export OpenTelemetry traces over OTLP (default: on when OTEL_TRACES_EXPORTER=otlp; docs/observability.md)")
	fs.StringVar(&fc.Tracing.Endpoint, "tracing-endpoint", "", "the collector's OTLP base `URL`: http://HOST:4318 for http/protobuf, http://HOST:4317 for grpc (default: OTEL_EXPORTER_OTLP_ENDPOINT)")
	fs.StringVar(&fc.Tracing.Protocol, "tracing-protocol", "", "OTLP `PROTOCOL`: grpc or http/protobuf (default: OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)")
	fs.DurationVar(&shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long shutdown waits for requests in flight")
	reloadPoll := fs.Duration("reload-poll", 2*time.Second, "check the policy files for changes this often (0: only on SIGHUP)")
	cacheDir := fs.String("cache-dir", defaultCacheDir(), "compiled-module cache `DIR`")
	if code, done := parseFlags(fs, args, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		io.WriteString(stderr, "ctxgate serve: unexpected argument "+quote(fs.Arg(0))+"\n")
		return exitUsage
	}
	cfg := &server.FileConfig{}
	if *config != "" {
		c, err := server.ReadFileConfig(*config)
		if err != nil {
			return fail(stderr, "serve", err)
		}
		cfg = c
	}
	// Flags given on the command line win over the file; defaults do not.
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	override(set, cfg, &fc, trust)
	if set["tracing"] {
		cfg.Tracing.Enabled = tracing
	}
	applyDecisionLog(set, &cfg.DecisionLogConfig)
	if set["reload-poll"] || cfg.ReloadPoll == nil {
		d := server.Duration(*reloadPoll)
		cfg.ReloadPoll = &d
	}
	if cfg.Limits.ShutdownTimeout > 0 && !set["shutdown-timeout"] {
		shutdownTimeout = time.Duration(cfg.Limits.ShutdownTimeout)
	}

	opts, err := cfg.Options()
	if err != nil {
		return fail(stderr, "serve", usageError{err})
	}
	opts.Native, opts.CacheDir, opts.RequirePolicy = *native, *cacheDir, true
	if opts.Interrupt, err = host.ParseInterrupt(*interrupt); err != nil {
		return fail(stderr, "serve", usageError{err})
	}
	if *wasm != "" {
		if opts.Wasm, err = os.ReadFile(*wasm); err != nil {
			return fail(stderr, "serve", err)
		}
	}
	opts.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	if cfg.AccessLog == "" {
		cfg.AccessLog = "stdout"
	}
	if opts.AccessLog, err = server.OpenAccessLog(strings.TrimSpace(cfg.AccessLog), stdout, stderr, cfg.AccessLogRotation()); err != nil {
		return fail(stderr, "serve", err)
	}
	ctx := context.Background()
	traces, err := startTracing(ctx, cfg.Tracing, opts.Logger)
	if err != nil {
		return fail(stderr, "serve", usageError{err})
	}
	defer stopTracing(traces, opts.Logger)
	if traces != nil {
		opts.TracerProvider = traces.Provider
	}
	srv, err := server.New(ctx, opts)
	if err != nil {
		return fail(stderr, "serve", err)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		srv.Shutdown(ctx)
		return fail(stderr, "serve", err)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	io.WriteString(stdout, "ctxgate serve: listening on http://"+ln.Addr().String()+"\n")
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	for {
		select {
		case err := <-served:
			srv.Shutdown(ctx)
			if err != nil {
				return fail(stderr, "serve", err)
			}
			return exitOK
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				srv.Reload(ctx)  // logs its outcome; a bad policy keeps the old one
				srv.ReopenLogs() // gap, decision, feedback; a failure keeps the old file
				srv.ReopenAccessLog()
				continue
			}
			opts.Logger.Info("shutting down: draining requests in flight", "signal", sig.String(), "timeout", shutdownTimeout.String())
			sctx, cancel := context.WithTimeout(ctx, shutdownTimeout)
			err := srv.Shutdown(sctx)
			cancel()
			<-served
			if err != nil {
				return fail(stderr, "serve", err)
			}
			return exitOK
		}
	}
}

// override copies the flags given on the command line into the file config.
func override(set map[string]bool, cfg, f *server.FileConfig, trust []string) {
	pick := map[string]func(){
		"listen":                func() { cfg.Listen = f.Listen },
		"policy":                func() { cfg.Policy = f.Policy },
		"trust":                 func() { cfg.Trust = trust },
		"trust-mode":            func() { cfg.TrustMode = f.TrustMode },
		"min-version":           func() { cfg.MinVersion = f.MinVersion },
		"state-dir":             func() { cfg.StateDir = f.StateDir },
		"module":                func() { cfg.Module = f.Module },
		"vector-metric":         func() { cfg.VectorMetric = f.VectorMetric },
		"rerank-scale":          func() { cfg.RerankScale = f.RerankScale },
		"pool-size":             func() { cfg.PoolSize = f.PoolSize },
		"upstream":              func() { cfg.Upstream = f.Upstream },
		"fail-open":             func() { cfg.FailOpen = f.FailOpen },
		"gap-log":               func() { cfg.GapLog = f.GapLog },
		"gap-log-max-bytes":     func() { cfg.GapLogMaxBytes = f.GapLogMaxBytes },
		"gap-log-keep":          func() { cfg.GapLogKeep = f.GapLogKeep },
		"documents-path":        func() { cfg.DocumentsPath = f.DocumentsPath },
		"query-path":            func() { cfg.QueryPath = f.QueryPath },
		"caveat-delivery":       func() { cfg.CaveatDelivery = f.CaveatDelivery },
		"access-log":            func() { cfg.AccessLog = f.AccessLog },
		"access-log-max-bytes":  func() { cfg.AccessLogMaxBytes = f.AccessLogMaxBytes },
		"access-log-keep":       func() { cfg.AccessLogKeep = f.AccessLogKeep },
		"max-body-bytes":        func() { cfg.Limits.MaxBodyBytes = f.Limits.MaxBodyBytes },
		"large-body-bytes":      func() { cfg.Limits.LargeBodyBytes = f.Limits.LargeBodyBytes },
		"large-concurrency":     func() { cfg.Limits.LargeConcurrency = f.Limits.LargeConcurrency },
		"read-timeout":          func() { cfg.Limits.ReadTimeout = f.Limits.ReadTimeout },
		"write-timeout":         func() { cfg.Limits.WriteTimeout = f.Limits.WriteTimeout },
		"gate-timeout":          func() { cfg.Limits.GateTimeout = f.Limits.GateTimeout },
		"upstream-timeout":      func() { cfg.Limits.UpstreamTimeout = f.Limits.UpstreamTimeout },
		"upstream-idle-timeout": func() { cfg.Limits.UpstreamIdleTimeout = f.Limits.UpstreamIdleTimeout },
		"tracing-endpoint":      func() { cfg.Tracing.Endpoint = f.Tracing.Endpoint },
		"tracing-protocol":      func() { cfg.Tracing.Protocol = f.Tracing.Protocol },
	}
	pick["max-inflight-body-bytes"] = func() { cfg.Limits.MaxInflightBodyBytes = f.Limits.MaxInflightBodyBytes }
	for name, apply := range pick {
		if set[name] {
			apply()
		}
	}
	if cfg.Listen == "" {
		cfg.Listen = f.Listen // the flag's default
	}
	if cfg.Module == "" {
		cfg.Module = f.Module
	}
	cfg.Policy = strings.TrimSpace(cfg.Policy)
}

// durFlag binds a server.Duration to a flag.
func durFlag(fs *flag.FlagSet, d *server.Duration, name, usage string) {
	fs.Func(name, usage, func(s string) error {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = server.Duration(v)
		return nil
	})
}
