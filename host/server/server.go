package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/host"
)

// Options configure a Server. The zero value serves the built-in default
// policy on the TinyGo module with every default limit and no gateway.
type Options struct {
	Policy PolicySource
	// MinVersion refuses a policy whose version sorts before it
	// (bundle.CompareVersions), at start and on reload. Independently, with
	// trust keys a reload never goes back from the running signed policy's
	// version, nor a start from the highest recorded in the policy state
	// (StateDir).
	MinVersion string
	// StateDir holds the policy state file: with trust keys, the highest
	// signed version loaded is kept there (policy_state.go) and honoured
	// after a restart, MinVersion being the floor below it. Default: the
	// policy file's directory.
	StateDir string
	// RequirePolicy makes New fail when the policy cannot be loaded.
	// Otherwise the server starts without one, answers 503 until a reload
	// (SIGHUP or a file change) loads a good policy.
	RequirePolicy bool

	Module host.Module
	Wasm   []byte // a custom module instead of Module
	Native bool   // run the core natively, without Wasm (for comparison only)
	// Interrupt says whether a gate deadline stops a running call
	// (host.Options.Interrupt): by default the bundled modules run without
	// wazero's termination checks (4-8x faster; every run of theirs ends)
	// and a custom Wasm module with them.
	Interrupt host.Interrupt
	PoolSize  int // Wasm instances; default GOMAXPROCS
	// LargeBodyBytes: gate calls on larger inputs run in the large-request
	// lane (lane.go): termination checks, at most LargeConcurrency at once.
	// Default 256 KiB; negative: no lane.
	LargeBodyBytes   int64
	LargeConcurrency int // default GOMAXPROCS-1, at least 1
	MaxPages         uint32
	CacheDir         string
	// VectorMetric and RerankScale are the score conventions of every
	// request that states none (host.Options).
	VectorMetric gate.VectorMetric
	RerankScale  gate.RerankScale

	// Upstream is the OpenAI-compatible base URL gateway mode forwards to
	// (the request path is appended; a base URL ending in /v1 takes it
	// without its own /v1). Empty: no gateway, /v1/chat/completions is 404.
	// Set: /v1/chat/completions and /v1/responses are gated, and every
	// other path the server does not serve is passed through (proxy.go).
	Upstream string
	// FailOpen: when the gate cannot decide a chat request (bad body, bad
	// field, timeout), pass it upstream unchanged instead of answering the
	// error. Marked x-ctxgate-action: error either way.
	FailOpen bool
	// GatewayOff passes every chat request through ungated
	// (sufficient_context.enabled: false).
	GatewayOff bool
	// DocumentsPath and QueryPath locate the retrieved documents and the
	// question in a chat body (dotted paths), as in the Envoy filter.
	// Defaults: "documents"; the last user message's content.
	DocumentsPath []string
	QueryPath     []string
	// NoAnswerCheck disables the answer check (soft refusal, citations) on
	// upstream answers.
	NoAnswerCheck bool
	// RequireEmbeddings rejects requests decided without embeddings (422).
	RequireEmbeddings bool
	// CaveatDelivery says how a caveat reaches the end user (caveat.go):
	// prefix (the default), suffix, instruction or none.
	CaveatDelivery CaveatDelivery
	// AccessLog receives one JSON line per request (accesslog.go); nil:
	// none. OpenAccessLog opens the usual destinations.
	AccessLog io.Writer

	// GapLog is the knowledge-gap JSONL file; empty: no log.
	GapLog string
	// GapLogMaxBytes rotates the gap log when it reaches this size (to
	// GapLog.1, GapLog.2, ...); 0: DefaultLogMaxBytes; negative: never
	// (rotate it with logrotate and ReopenLogs, SIGHUP in ctxgate serve).
	GapLogMaxBytes int64
	// GapLogKeep is how many rotated files are kept; default
	// DefaultLogKeep.
	GapLogKeep int
	// FeedbackEntries bounds the decisions remembered for feedback.
	FeedbackEntries int

	// DecisionLog writes one JSON line per decision (decisionlog.go,
	// docs/decision-log.md); an empty Path: no log.
	DecisionLog DecisionLogOptions
	// FeedbackLog records each accepted POST /v1/feedback as one JSON line:
	// the verdicts `ctxgate decisions join` pairs with the decision log.
	// Empty: verdicts are counted but not recorded.
	FeedbackLog string
	// FeedbackTokens, when any, are the bearer tokens POST /v1/feedback
	// and GET /gaps must present (401 otherwise).
	FeedbackTokens []string
	// DecisionIDKey signs decision ids (ids.go), at least MinIDKeyBytes;
	// nil: a random key per process (ids do not survive a restart).
	DecisionIDKey []byte

	MaxBodyBytes     int64         // request bodies; default 8 MiB (413 above)
	MaxResponseBytes int64         // upstream answers edited whole; default 8 MiB (a larger gated one is not relayed)
	ReadTimeout      time.Duration // whole request, headers and body; default 30 s
	WriteTimeout     time.Duration // response; default 120 s (a stream extends it per chunk)
	IdleTimeout      time.Duration // keep-alive; default 120 s
	GateTimeout      time.Duration // deadline of one gate call, pool wait included; default 1 s
	UpstreamTimeout  time.Duration // until the upstream's response headers; default 120 s
	// UpstreamIdleTimeout bounds each wait for the upstream's body, and in
	// a stream each wait for a complete event; default WriteTimeout. A
	// non-stream answer must also be whole within WriteTimeout.
	UpstreamIdleTimeout time.Duration
	// MaxInflightBodyBytes bounds the bodies held in memory at once
	// (requests read whole, upstream answers edited; budget.go); default 64
	// MiB, negative: no bound. Past it a request is answered 503.
	MaxInflightBodyBytes int64
	// ReloadPoll is how often the policy files' mtimes are checked;
	// default 2 s, negative: never (SIGHUP or Reload only).
	ReloadPoll time.Duration

	Logger *slog.Logger
	// Transport reaches the upstream; default a clone of http.DefaultTransport.
	Transport http.RoundTripper

	// TracerProvider traces requests (tracing.go, docs/observability.md):
	// one server span per request with the decision's ctxgate.*
	// attributes, and in gateway mode the upstream call as a GenAI client
	// span. Nil: no tracing, at no cost per request. StartTracing makes one
	// from the tracing: section and the OTEL_* environment variables.
	TracerProvider trace.TracerProvider
	// Propagator reads the caller's trace context and writes the
	// upstream's; default W3C trace context and baggage.
	Propagator propagation.TextMapPropagator
	// GenAIProvider is gen_ai.provider.name on the upstream call's span;
	// default openai.
	GenAIProvider string
}

func (o *Options) defaults() {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = host.DefaultMaxInputBytes
	}
	if o.MaxInflightBodyBytes == 0 {
		o.MaxInflightBodyBytes = defaultInflightBodyBytes
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = 8 << 20
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = 30 * time.Second
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = 120 * time.Second
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = 120 * time.Second
	}
	if o.GateTimeout <= 0 {
		o.GateTimeout = time.Second
	}
	if o.UpstreamTimeout <= 0 {
		o.UpstreamTimeout = 120 * time.Second
	}
	if o.UpstreamIdleTimeout <= 0 {
		o.UpstreamIdleTimeout = o.WriteTimeout
	}
	if o.ReloadPoll == 0 {
		o.ReloadPoll = 2 * time.Second
	}
	if o.LargeBodyBytes == 0 {
		o.LargeBodyBytes = 256 << 10
	}
	if o.LargeConcurrency <= 0 {
		o.LargeConcurrency = defaultLargeConcurrency()
	}
	o.GapLogMaxBytes, o.GapLogKeep = logRotation(o.GapLogMaxBytes, o.GapLogKeep)
	if o.FeedbackEntries <= 0 {
		o.FeedbackEntries = 10000
	}
	if o.CaveatDelivery == "" {
		o.CaveatDelivery = CaveatPrefix
	}
	if len(o.DocumentsPath) == 0 {
		o.DocumentsPath = []string{"documents"}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
}

// Server is `ctxgate serve`. Create it with New, serve with Serve (or mount
// Handler / HTTPServer), stop with Shutdown.
type Server struct {
	opts     Options
	log      *slog.Logger
	access   *slog.Logger // nil: no access log
	cur      atomic.Pointer[active]
	reloadMu sync.Mutex
	metrics  *metrics
	records  *records
	bodies   *bodyBudget // max_inflight_body_bytes (budget.go)
	gaps     *lineLog
	upstream *url.URL
	client   *http.Client
	http     *http.Server
	state    *policyState   // nil without trust keys (policy_state.go)
	started  bool           // New has returned: a newer policy raises the state
	ids      *idIssuer      // decision ids: random, MAC-signed (ids.go)
	decLog   *decisionLog   // nil without DecisionLog.Path (decisionlog.go)
	fbState  *feedbackState // feedback log, tokens, verdict metrics (feedback.go)
	gapPages gapsPages      // GET /gaps pages of the unchanged gap log (gapscache.go)
	closing  atomic.Bool
	faultLog rateLimit // trap and internal-error log lines: one a second
	trace    *tracing  // nil: tracing off (tracing.go)

	watchMu   sync.Mutex
	watched   map[string]fileStamp
	stopWatch chan struct{}
	watchDone chan struct{}
	shutdown  sync.Once
}

// New loads the policy, builds the gate and prepares the handlers. It does
// not listen.
func New(ctx context.Context, opts Options) (*Server, error) {
	opts.defaults()
	s := &Server{opts: opts, log: opts.Logger, watched: map[string]fileStamp{}, faultLog: rateLimit{interval: time.Second}}
	if _, err := ParseCaveatDelivery(string(opts.CaveatDelivery)); err != nil {
		return nil, err
	}
	if opts.AccessLog != nil {
		s.access = slog.New(slog.NewJSONHandler(opts.AccessLog, nil))
	}
	s.bodies = &bodyBudget{max: opts.MaxInflightBodyBytes}
	s.metrics = newMetrics(s)
	s.records = newRecords(opts.FeedbackEntries)
	ids, err := newIDIssuer(opts.DecisionIDKey)
	if err != nil {
		return nil, err
	}
	s.ids = ids
	if opts.Upstream != "" {
		u, err := url.Parse(opts.Upstream)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, errors.New("upstream: want an http(s) base URL such as http://127.0.0.1:8000, got " + strconv.Quote(opts.Upstream))
		}
		s.upstream = u
		tr := opts.Transport
		if tr == nil {
			t := http.DefaultTransport.(*http.Transport).Clone()
			t.ResponseHeaderTimeout = opts.UpstreamTimeout
			t.MaxIdleConnsPerHost = 64
			tr = t
		}
		s.client = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	s.trace = newTracing(&opts, s.upstream)
	if len(opts.Policy.TrustFiles) == 0 {
		s.log.Warn("policy signatures are NOT checked: no trust keys are configured (--trust); "+
			"whoever can write the policy file decides what the gate does", "policy", opts.Policy.describe())
	}
	if opts.Policy.Path == "" && opts.Policy.SufficientContext.On() {
		s.log.Warn("sufficient_context is enabled and no policy is named: serving the sufficient-context preset, "+
			"NOT the built-in default policy (name one with --policy or policy: to choose)", "policy", opts.Policy.describe())
	}
	if err := s.openState(); err != nil {
		return nil, err
	}
	if err := s.Reload(ctx); err != nil {
		if opts.RequirePolicy {
			return nil, err
		}
		s.log.Warn("starting without a policy: answering 503 until a reload succeeds", "error", err.Error())
	}
	if err := s.recordStarted(); err != nil {
		s.closeGate()
		return nil, err
	}
	if opts.GapLog != "" {
		mask, err := newGapMask(opts.DecisionLog.Mask, s.ids)
		if err != nil {
			s.closeGate()
			return nil, err
		}
		g, err := openGapLog(opts.GapLog, lineLogOptions{maxBytes: opts.GapLogMaxBytes, keep: opts.GapLogKeep, mask: mask}, s.log, s.metrics)
		if err != nil {
			s.closeGate()
			return nil, err
		}
		s.gaps = g
	}
	if err := s.openLearningLogs(); err != nil {
		s.closeGate()
		s.gaps.Close()
		return nil, err
	}
	s.http = &http.Server{
		Handler:           s.Handler(),
		ReadTimeout:       opts.ReadTimeout,
		ReadHeaderTimeout: min(opts.ReadTimeout, 10*time.Second),
		WriteTimeout:      opts.WriteTimeout,
		IdleTimeout:       opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	if opts.ReloadPoll > 0 {
		s.stopWatch, s.watchDone = make(chan struct{}), make(chan struct{})
		go s.watch(opts.ReloadPoll)
	}
	return s, nil
}

// Handler routes the API. Each route checks its method and answers the
// error JSON otherwise. In gateway mode, a POST that the upstream would
// answer as chat completions or the Responses API, however spelled, is
// gated (route.go); other methods there pass through only without a body
// (GET, HEAD, OPTIONS) and are refused otherwise; every path not routed
// here is passed through to the upstream. Every request is counted and,
// with an access log, logged (accesslog.go).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	routes := map[string]string{}
	route := func(path, method string, h http.HandlerFunc) {
		routes[path] = routeName(path)
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
				w.Header().Set("Allow", method)
				s.fail(w, newAPIError(405, codeMethod, "", r.Method+" "+path+": use "+method))
				return
			}
			h(w, r)
		})
	}
	route("/v1/gate", http.MethodPost, s.handleGate)
	route("/v1/validate", http.MethodPost, s.handleValidate)
	route("/v1/feedback", http.MethodPost, s.handleFeedback)
	route("/v1/policy", http.MethodGet, s.handlePolicy)
	route("/healthz", http.MethodGet, s.handleHealth)
	route("/gaps", http.MethodGet, s.handleGaps)
	metrics := promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})
	route("/metrics", http.MethodGet, metrics.ServeHTTP)
	mux.HandleFunc("/", s.handlePassthrough)
	// The gated endpoints are found before the mux: by the path the
	// upstream will serve (route.go), however the client spelled it, and
	// before the mux would redirect a path it finds unclean.
	own := maps.Clone(routes) // the server's own paths, which no upstream serves
	for path, api := range gatedPaths {
		routes[path] = api.route
	}
	gate := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if own[r.URL.Path] == "" {
			if api := s.gatedRoute(r); api != nil {
				s.serveGatedRoute(w, r, api)
				return
			}
		}
		mux.ServeHTTP(w, r)
	})
	return s.observe(gate, routes)
}

// HTTPServer is the configured *http.Server (timeouts, handler). Serve uses
// it; tests hand it to httptest.Server as its Config.
func (s *Server) HTTPServer() *http.Server { return s.http }

// Serve accepts connections on ln until Shutdown. It returns nil after a
// graceful shutdown.
func (s *Server) Serve(ln net.Listener) error {
	err := s.http.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting connections, waits for requests in flight to
// finish (bounded by ctx), then stops the policy watcher, closes the gate,
// syncs the gap log and closes an access log file OpenAccessLog opened.
// Safe to call more than once.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	s.shutdown.Do(func() {
		s.closing.Store(true)
		err = s.http.Shutdown(ctx)
		if s.stopWatch != nil {
			close(s.stopWatch)
			<-s.watchDone
		}
		s.reloadMu.Lock() // no reload may start a gate now
		s.closeGate()
		s.reloadMu.Unlock()
		if cerr := s.gaps.Close(); err == nil {
			err = cerr
		}
		if cerr := s.closeLearningLogs(); err == nil {
			err = cerr
		}
		if f, ok := s.opts.AccessLog.(*accessLogFile); ok { // a file OpenAccessLog opened
			f.Close()
		}
	})
	return err
}

// ReopenGapLog closes the gap log and opens its path again, once the events
// already queued are written: after a rename-based rotation (logrotate's
// default), new events go to the new file. ctxgate serve calls it on
// SIGHUP. On an error the old file stays in use.
func (s *Server) ReopenGapLog() error {
	return s.gaps.Reopen()
}

func (s *Server) closeGate() {
	if a := s.cur.Swap(nil); a != nil {
		a.retire()
	}
}

// newID returns a new decision id (ids.go): unguessable, and checkable by
// this server (or one sharing its key) without remembering it.
func (s *Server) newID() string {
	return s.ids.issue(idDecision)
}

// fail writes an error answer and counts it.
func (s *Server) fail(w http.ResponseWriter, e *apiError) {
	s.metrics.errors.WithLabelValues(e.Code).Inc()
	noteError(w, e.Code)
	writeError(w, e)
}

// readBody reads a request body of at most MaxBodyBytes, under the
// in-flight budget while it is read (for a body the handler is done with at
// once; readHeld keeps it counted).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	b, h, e := s.readHeld(w, r, s.opts.MaxBodyBytes, tooLarge)
	h.release()
	return b, e
}

// readHeld reads a request body of at most limit bytes (over: the answer
// for a longer one, of its declared length or -1) under the in-flight body
// budget (budget.go). The bytes stay counted until the caller releases
// them. A declared length over the limit is refused before anything is
// read; so is the rest of a body once it passes the limit.
func (s *Server) readHeld(w http.ResponseWriter, r *http.Request, limit int64, over func(n, limit int64) *apiError) ([]byte, *heldBody, *apiError) {
	if r.ContentLength > limit {
		return nil, nil, over(r.ContentLength, limit)
	}
	b, h, err := s.bodies.readHeld(http.MaxBytesReader(w, r.Body, limit), r.ContentLength, limit)
	if err != nil {
		var mb *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mb):
			return nil, nil, over(-1, limit)
		case errors.Is(err, errOverloaded):
			w.Header().Set("Retry-After", "1")
			return nil, nil, newAPIError(503, codeOverloaded, "", err.Error())
		case errors.As(err, &ne) && ne.Timeout():
			return nil, nil, newAPIError(408, codeReadTimeout, "", "the request body did not arrive within the read timeout")
		}
		return nil, nil, newAPIError(400, "bad_json", "", "cannot read the request body: "+err.Error())
	}
	return b, h, nil
}

func tooLarge(n, limit int64) *apiError {
	msg := "request body exceeds max_body_bytes " + strconv.FormatInt(limit, 10)
	if n >= 0 {
		msg = "request body of " + strconv.FormatInt(n, 10) + " bytes exceeds max_body_bytes " + strconv.FormatInt(limit, 10)
	}
	return newAPIError(413, "limit", "body", msg)
}

// noPolicy is the answer while no policy is loaded.
var noPolicy = newAPIError(503, "bad_policy", "policy", "no policy is loaded; fix the policy file and reload (SIGHUP)")

// gateCtx bounds one gate call by the gate deadline.
func (s *Server) gateCtx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.opts.GateTimeout)
}

// ---- policy file watching ----

// fileStamp is what the poller compares: the file's identity as well as its
// mtime and size, so a symlink swapped to another file of the same size and
// mtime (/dev/zero for /dev/null, a ConfigMap's new data directory) is a
// change.
type fileStamp struct {
	mod  time.Time
	size int64
	fi   os.FileInfo // nil: the file is missing
}

func stamp(path string) fileStamp {
	st, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{st.ModTime(), st.Size(), st}
}

func (a fileStamp) same(b fileStamp) bool {
	if a.fi == nil || b.fi == nil {
		return a.fi == nil && b.fi == nil
	}
	return a.mod.Equal(b.mod) && a.size == b.size && os.SameFile(a.fi, b.fi)
}

// watchFiles records the files the last load read and their current stamps.
func (s *Server) watchFiles(files []string) {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	s.watched = make(map[string]fileStamp, len(files))
	for _, f := range files {
		s.watched[f] = stamp(f)
	}
}

// changed reports whether a watched file's mtime or size moved.
func (s *Server) changed() bool {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	for f, old := range s.watched {
		if !stamp(f).same(old) {
			return true
		}
	}
	return false
}

func (s *Server) watch(every time.Duration) {
	defer close(s.watchDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stopWatch:
			return
		case <-t.C:
			if s.changed() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				s.Reload(ctx)
				cancel()
			}
		}
	}
}
