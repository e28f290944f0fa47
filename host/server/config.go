package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/gate/wire"
	"github.com/ctxgate/ctxgate/host"
	"github.com/ctxgate/ctxgate/internal/safefile"
)

// FileConfig is the YAML configuration file (examples/serve/ctxgate.yaml).
// Every key is optional; command-line flags override it. The
// sufficient_context block is the sufficient-context gateway's configuration, mapped onto
// the policy by PolicySource.Load (docs/server.md explains the mapping).
type FileConfig struct {
	Listen string   `yaml:"listen"`
	Policy string   `yaml:"policy"` // a policy file, a signed bundle, or a preset name
	Trust  []string `yaml:"trust"`  // trust files: only policies they sign are loaded
	// TrustMode is the signatures a bundle needs: hybrid (the default),
	// ed25519 or ml-dsa-65 (alias ml-dsa). It needs trust.
	TrustMode string `yaml:"trust_mode"`
	// MinVersion refuses a policy older than this version (and with trust
	// keys, reloads never go back from the running version).
	MinVersion string `yaml:"min_version"`
	// StateDir holds the policy state file (with trust: the highest signed
	// version loaded, honoured after a restart); default the policy's
	// directory.
	StateDir string `yaml:"state_dir"`
	Module   string `yaml:"module"` // tinygo | go
	PoolSize int    `yaml:"pool_size"`
	Upstream string `yaml:"upstream"`
	FailOpen bool   `yaml:"fail_open"`
	GapLog   string `yaml:"gap_log"`
	// GapLogMaxBytes rotates the gap log at this size (0: 64 MiB;
	// negative: never); GapLogKeep rotated files are kept (0: 5).
	GapLogMaxBytes int64 `yaml:"gap_log_max_bytes"`
	GapLogKeep     int   `yaml:"gap_log_keep"`
	// The decision log, the feedback log and their secrets.
	DecisionLogConfig `yaml:",inline"`

	// VectorMetric and RerankScale are the score conventions of every
	// request that states none (docs/decision.md): the vector store's
	// metric, and whether rerank scores are probabilities or logits.
	VectorMetric string `yaml:"vector_metric"`
	RerankScale  string `yaml:"rerank_scale"`

	DocumentsPath string `yaml:"documents_path"`
	QueryPath     string `yaml:"query_path"`
	AnswerCheck   *bool  `yaml:"answer_check"`
	// CaveatDelivery: how a caveat reaches the end user: prefix (default),
	// suffix, instruction, none.
	CaveatDelivery string `yaml:"caveat_delivery"`
	// AccessLog: stdout (ctxgate serve's default), stderr, off, or a file
	// path; one JSON line per request. Opened by the caller (OpenAccessLog).
	AccessLog string `yaml:"access_log"`
	// AccessLogMaxBytes rotates an access log file at this size (0:
	// 64 MiB; negative: never); AccessLogKeep rotated files are kept
	// (0: 5). Use AccessLogRotation.
	AccessLogMaxBytes int64 `yaml:"access_log_max_bytes"`
	AccessLogKeep     int   `yaml:"access_log_keep"`

	// Tracing: OpenTelemetry traces over OTLP (StartTracing,
	// docs/observability.md).
	Tracing TracingConfig `yaml:"tracing"`

	Limits            FileLimits         `yaml:"limits"`
	ReloadPoll        *Duration          `yaml:"reload_poll"`
	SufficientContext *SufficientContext `yaml:"sufficient_context"`
}

// FileLimits are the server's limits (zero: the default).
type FileLimits struct {
	MaxBodyBytes     int64    `yaml:"max_body_bytes"`
	MaxResponseBytes int64    `yaml:"max_response_bytes"`
	ReadTimeout      Duration `yaml:"read_timeout"`
	WriteTimeout     Duration `yaml:"write_timeout"`
	IdleTimeout      Duration `yaml:"idle_timeout"`
	GateTimeout      Duration `yaml:"gate_timeout"`
	UpstreamTimeout  Duration `yaml:"upstream_timeout"`
	// UpstreamIdleTimeout: the longest wait for the next bytes of an
	// upstream's body, and in a stream for the next complete event; zero:
	// write_timeout.
	UpstreamIdleTimeout Duration `yaml:"upstream_idle_timeout"`
	ShutdownTimeout     Duration `yaml:"shutdown_timeout"`
	FeedbackEntries     int      `yaml:"feedback_entries"`
	// LargeBodyBytes: gate calls on larger inputs run in the large-request
	// lane (0: 256 KiB; negative: no lane); LargeConcurrency bounds its
	// calls at once (0: GOMAXPROCS-1).
	LargeBodyBytes   int64 `yaml:"large_body_bytes"`
	LargeConcurrency int   `yaml:"large_concurrency"`
	// MaxInflightBodyBytes bounds the bodies held in memory at once (0: 64
	// MiB; negative: no bound).
	MaxInflightBodyBytes int64 `yaml:"max_inflight_body_bytes"`
}

// SufficientContext is the sufficient-context gateway's configuration block. Pointers record
// presence: an absent key leaves the policy as it is.
type SufficientContext struct {
	// Enabled false: the block is ignored and gateway mode passes chat
	// requests through ungated (x-ctxgate-action: skip). /v1/gate still
	// answers: calling it is an explicit request for a decision.
	Enabled     *bool `yaml:"enabled"`
	MinContexts *int  `yaml:"min_contexts"`
	Thresholds  struct {
		Sufficient *float64 `yaml:"sufficient"`
		Partial    *float64 `yaml:"partial"`
	} `yaml:"thresholds"`
	// RequireEmbeddings: a request whose decision could not compute the
	// embedding-based relevance signal is rejected (422, field
	// query_embedding) instead of being decided on words alone.
	RequireEmbeddings bool `yaml:"require_embeddings"`
	// DeclineInsufficient: true keeps (or makes) insufficient context a
	// hard refusal; false turns it into a caveat (and no context at all
	// into the fallback prompt). Absent: the policy's own actions.
	DeclineInsufficient *bool `yaml:"decline_insufficient"`
}

// On reports whether the block is present and enabled (enabled defaults to
// true when the block is present, as in the sufficient-context document's example).
func (sc *SufficientContext) On() bool {
	return sc != nil && (sc.Enabled == nil || *sc.Enabled)
}

// Duration reads "250ms", "10s" (Go syntax) from YAML.
type Duration time.Duration

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	if v < 0 {
		return fmt.Errorf("line %d: duration %s is negative", n.Line, s)
	}
	*d = Duration(v)
	return nil
}

// ReadFileConfig reads and strictly decodes the YAML file: an unknown key is
// an error naming it, so a typo does not silently keep a default. It is
// read as a policy is (safefile): a FIFO or a device at the path is an
// error, not a hang or an exhausted memory.
func ReadFileConfig(path string) (*FileConfig, error) {
	data, err := safefile.Read(path, safefile.MaxPolicyBytes)
	if err != nil {
		return nil, err
	}
	return ParseFileConfig(data)
}

// ParseFileConfig decodes a YAML configuration document.
func ParseFileConfig(data []byte) (*FileConfig, error) {
	var c FileConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) { // an empty file: every default
			return &c, nil
		}
		// yaml.v3 lists problems on indented lines; one line reads better in
		// a log and in the CLI's one-line errors.
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = strings.ReplaceAll(strings.ReplaceAll(msg, ":\n  ", ": "), "\n  ", "; ")
		return nil, errors.New("config: " + msg)
	}
	if sc := c.SufficientContext; sc != nil {
		if sc.MinContexts != nil && *sc.MinContexts < 1 {
			return nil, errors.New("config: sufficient_context.min_contexts: must be at least 1")
		}
		for _, t := range []struct {
			name string
			v    *float64
		}{{"sufficient", sc.Thresholds.Sufficient}, {"partial", sc.Thresholds.Partial}} {
			if t.v != nil && (*t.v <= 0 || *t.v > 1) {
				return nil, fmt.Errorf("config: sufficient_context.thresholds.%s: must be in (0, 1], got %v", t.name, *t.v)
			}
		}
		if s, p := sc.Thresholds.Sufficient, sc.Thresholds.Partial; s != nil && p != nil && *p >= *s {
			return nil, errors.New("config: sufficient_context.thresholds: partial must be below sufficient")
		}
	}
	return &c, nil
}

// Options turns the file configuration (with flags already applied to it)
// into server Options.
func (c *FileConfig) Options() (Options, error) {
	o := Options{
		Policy:              PolicySource{Path: c.Policy, TrustFiles: c.Trust, SufficientContext: c.SufficientContext},
		MinVersion:          strings.TrimSpace(c.MinVersion),
		StateDir:            c.StateDir,
		PoolSize:            c.PoolSize,
		Upstream:            c.Upstream,
		FailOpen:            c.FailOpen,
		GapLog:              c.GapLog,
		GapLogMaxBytes:      c.GapLogMaxBytes,
		GapLogKeep:          c.GapLogKeep,
		MaxBodyBytes:        c.Limits.MaxBodyBytes,
		MaxResponseBytes:    c.Limits.MaxResponseBytes,
		ReadTimeout:         time.Duration(c.Limits.ReadTimeout),
		WriteTimeout:        time.Duration(c.Limits.WriteTimeout),
		IdleTimeout:         time.Duration(c.Limits.IdleTimeout),
		GateTimeout:         time.Duration(c.Limits.GateTimeout),
		UpstreamTimeout:     time.Duration(c.Limits.UpstreamTimeout),
		UpstreamIdleTimeout: time.Duration(c.Limits.UpstreamIdleTimeout),
		FeedbackEntries:     c.Limits.FeedbackEntries,
		LargeBodyBytes:      c.Limits.LargeBodyBytes,
		LargeConcurrency:    c.Limits.LargeConcurrency,
	}
	o.MaxInflightBodyBytes = c.Limits.MaxInflightBodyBytes
	o.GenAIProvider = strings.TrimSpace(c.Tracing.GenAIProvider)
	if err := c.DecisionLogConfig.apply(&o); err != nil {
		return o, err
	}
	if c.ReloadPoll != nil {
		o.ReloadPoll = time.Duration(*c.ReloadPoll)
		if o.ReloadPoll == 0 {
			o.ReloadPoll = -1 // "0s" in the file: no polling
		}
	}
	if c.TrustMode != "" {
		m, err := bundle.ParseMode(c.TrustMode)
		if err != nil {
			return o, errors.New("config: trust_mode (--trust-mode): unknown mode " + strconv.Quote(c.TrustMode) + " (want hybrid, ed25519 or ml-dsa-65)")
		}
		if len(c.Trust) == 0 {
			return o, errors.New("config: trust_mode (--trust-mode) is " + c.TrustMode + " but no trust files are given (trust, --trust): nothing would be verified")
		}
		o.Policy.TrustMode = m
	}
	if c.VectorMetric != "" {
		m, ok := wire.ParseVectorMetric(c.VectorMetric)
		if !ok {
			return o, errors.New("config: vector_metric (--vector-metric): unknown metric " + strconv.Quote(c.VectorMetric) + " (want cosine, dot, l2, l2_squared, cosine_distance or negative_dot)")
		}
		o.VectorMetric = m
	}
	if c.RerankScale != "" {
		r, ok := wire.ParseRerankScale(c.RerankScale)
		if !ok {
			return o, errors.New("config: rerank_scale (--rerank-scale): unknown scale " + strconv.Quote(c.RerankScale) + " (want probability or logit)")
		}
		o.RerankScale = r
	}
	if c.Module != "" {
		m, err := host.ParseModule(c.Module)
		if err != nil {
			return o, errors.New("config: module: " + err.Error())
		}
		o.Module = m
	}
	if sc := c.SufficientContext; sc != nil {
		o.GatewayOff = !sc.On()
		o.RequireEmbeddings = sc.On() && sc.RequireEmbeddings
	}
	if c.AnswerCheck != nil {
		o.NoAnswerCheck = !*c.AnswerCheck
	}
	cd, err := ParseCaveatDelivery(strings.TrimSpace(c.CaveatDelivery))
	if err != nil {
		return o, errors.New("config: " + err.Error())
	}
	o.CaveatDelivery = cd
	for _, p := range []struct {
		name string
		s    string
		dst  *[]string
	}{{"documents_path", c.DocumentsPath, &o.DocumentsPath}, {"query_path", c.QueryPath, &o.QueryPath}} {
		if p.s == "" {
			continue
		}
		parts := strings.Split(p.s, ".")
		for _, s := range parts {
			if s == "" {
				return o, errors.New("config: " + p.name + ": empty segment in " + strconv.Quote(p.s))
			}
		}
		if p.name == "documents_path" && p.s == extensionField {
			return o, errors.New(`config: documents_path: "ctxgate" is the extension field, which is always read`)
		}
		*p.dst = parts
	}
	return o, nil
}

// AccessLogRotation is the access log file's rotation, for OpenAccessLog.
func (c *FileConfig) AccessLogRotation() LogRotation {
	return LogRotation{MaxBytes: c.AccessLogMaxBytes, Keep: c.AccessLogKeep}
}
