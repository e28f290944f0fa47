package main

import (
	"flag"

	"github.com/ctxgate/ctxgate/host/server"
)

// decisionLogFlags binds serve's decision-log and feedback flags to f. The
// returned func copies the ones given on the command line into cfg, so they
// override the config file as serve's other flags do.
func decisionLogFlags(fs *flag.FlagSet, f *server.DecisionLogConfig) func(set map[string]bool, cfg *server.DecisionLogConfig) {
	fs.StringVar(&f.DecisionLog, "decision-log", "", "append one JSON line per decision to this `FILE` (docs/decision-log.md; reopened on SIGHUP)")
	fs.BoolVar(&f.DecisionLogRequest, "decision-log-request", false, "log each decision's gate request too (the input calibration re-runs)")
	fs.Func("decision-log-mask", "erase these groups from logged requests: `LIST` of query, text (chunk text, titles, embeddings, metadata), all", func(s string) error {
		f.DecisionLogMask = server.SplitMask(s)
		return nil
	})
	fs.IntVar(&f.DecisionLogMaxLineBytes, "decision-log-max-line-bytes", 0, "longest decision-log line; a request that would pass it is left out (0: 1 MiB)")
	fs.Int64Var(&f.DecisionLogMaxBytes, "decision-log-max-bytes", 0, "rotate the decision and feedback logs at this many `BYTES` (0: 64 MiB; -1: never)")
	fs.IntVar(&f.DecisionLogKeep, "decision-log-keep", 0, "rotated decision and feedback logs kept (0: 5)")
	fs.StringVar(&f.FeedbackLog, "feedback-log", "", "append one JSON line per accepted POST /v1/feedback to this `FILE` (the verdicts ctxgate decisions join reads)")
	fs.StringVar(&f.FeedbackTokenFile, "feedback-token-file", "", "POST /v1/feedback and GET /gaps need Authorization: Bearer <a token in this `FILE`> (one a line)")
	fs.StringVar(&f.DecisionIDKeyFile, "decision-id-key-file", "", "sign decision ids with the secret in this `FILE` (32+ bytes), so they survive restarts and work across replicas")
	return func(set map[string]bool, cfg *server.DecisionLogConfig) {
		pick := map[string]func(){
			"decision-log":                func() { cfg.DecisionLog = f.DecisionLog },
			"decision-log-request":        func() { cfg.DecisionLogRequest = f.DecisionLogRequest },
			"decision-log-mask":           func() { cfg.DecisionLogMask = f.DecisionLogMask },
			"decision-log-max-line-bytes": func() { cfg.DecisionLogMaxLineBytes = f.DecisionLogMaxLineBytes },
			"decision-log-max-bytes":      func() { cfg.DecisionLogMaxBytes = f.DecisionLogMaxBytes },
			"decision-log-keep":           func() { cfg.DecisionLogKeep = f.DecisionLogKeep },
			"feedback-log":                func() { cfg.FeedbackLog = f.FeedbackLog },
			"feedback-token-file":         func() { cfg.FeedbackTokenFile = f.FeedbackTokenFile },
			"decision-id-key-file":        func() { cfg.DecisionIDKeyFile = f.DecisionIDKeyFile },
		}
		for name, apply := range pick {
			if set[name] {
				apply()
			}
		}
	}
}
