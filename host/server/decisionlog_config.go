package server

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ctxgate/ctxgate/internal/safefile"
)

// DecisionLogConfig is the configuration file's decision-log and feedback
// keys (docs/decision-log.md), inlined in FileConfig.
type DecisionLogConfig struct {
	DecisionLog        string   `yaml:"decision_log"`         // one JSON line per decision; empty: none
	DecisionLogRequest bool     `yaml:"decision_log_request"` // log each decision's gate request as "input"
	DecisionLogMask    MaskList `yaml:"decision_log_mask"`    // query, text, all: erased from the logged request
	// DecisionLogMaxLineBytes caps a line (0: 1 MiB); over it the request,
	// then the chunk outcomes, are left out.
	DecisionLogMaxLineBytes int `yaml:"decision_log_max_line_bytes"`
	// DecisionLogMaxBytes rotates the decision and feedback logs at this
	// size (0: 64 MiB; negative: never); DecisionLogKeep rotated files
	// are kept (0: 5).
	DecisionLogMaxBytes int64  `yaml:"decision_log_max_bytes"`
	DecisionLogKeep     int    `yaml:"decision_log_keep"`
	FeedbackLog         string `yaml:"feedback_log"` // one JSON line per accepted POST /v1/feedback
	// FeedbackTokenFile holds the bearer tokens POST /v1/feedback and GET
	// /gaps accept, one a line (blank lines and # comments skipped); empty:
	// no token.
	FeedbackTokenFile string `yaml:"feedback_token_file"`
	// DecisionIDKeyFile holds the secret (at least 32 bytes) decision ids
	// are signed with, so ids stay valid across restarts and replicas;
	// empty: a random key per process.
	DecisionIDKeyFile string `yaml:"decision_id_key_file"`
}

// MaskList reads decision_log_mask as a YAML list ([query, text]) or one
// comma-separated string ("query,text"), as the flag takes it.
type MaskList []string

func (m *MaskList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*m = SplitMask(n.Value)
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return fmt.Errorf("line %d: decision_log_mask: want a list of groups (query, text, all) or one comma-separated string", n.Line)
	}
	*m = list
	return nil
}

// SplitMask splits "query,text" into its groups.
func SplitMask(s string) []string {
	var out []string
	for _, g := range strings.Split(s, ",") {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, g)
		}
	}
	return out
}

// apply reads the secret files and sets the decision-log options.
func (c *DecisionLogConfig) apply(o *Options) error {
	o.DecisionLog = DecisionLogOptions{Path: c.DecisionLog, Request: c.DecisionLogRequest, Mask: c.DecisionLogMask,
		MaxLineBytes: c.DecisionLogMaxLineBytes, MaxBytes: c.DecisionLogMaxBytes, Keep: c.DecisionLogKeep}
	if _, _, _, err := parseMask(c.DecisionLogMask); err != nil {
		return errors.New("config: " + err.Error())
	}
	o.FeedbackLog = c.FeedbackLog
	if c.FeedbackTokenFile != "" {
		b, err := safefile.Read(c.FeedbackTokenFile, safefile.MaxPolicyBytes)
		if err != nil {
			return fmt.Errorf("config: feedback_token_file: %w", err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				o.FeedbackTokens = append(o.FeedbackTokens, line)
			}
		}
		if len(o.FeedbackTokens) == 0 {
			return errors.New("config: feedback_token_file: " + c.FeedbackTokenFile + " holds no token")
		}
	}
	if c.DecisionIDKeyFile != "" {
		b, err := safefile.Read(c.DecisionIDKeyFile, safefile.MaxPolicyBytes)
		if err != nil {
			return fmt.Errorf("config: decision_id_key_file: %w", err)
		}
		if b = bytes.TrimSpace(b); len(b) < MinIDKeyBytes {
			return errors.New("config: decision_id_key_file: " + c.DecisionIDKeyFile + " holds fewer than 32 bytes (try: head -c 32 /dev/urandom | base64)")
		}
		o.DecisionIDKey = b
	}
	return nil
}
