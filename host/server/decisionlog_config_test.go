package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecisionLogConfig: the YAML keys reach the options, the secrets are
// read from their files, and each mistake is an error naming its key.
func TestDecisionLogConfig(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	os.WriteFile(tokens, []byte("# rotated monthly\nfirst-token-0123456789\n\n  second-token-0123456789  \n"), 0o600)
	key := filepath.Join(dir, "key")
	os.WriteFile(key, []byte("0123456789abcdef0123456789abcdef\n"), 0o600)
	c, err := ParseFileConfig([]byte("decision_log: d.jsonl\ndecision_log_request: true\ndecision_log_mask: [query]\n" +
		"decision_log_max_line_bytes: 65536\ndecision_log_max_bytes: 1000000\ndecision_log_keep: 3\nfeedback_log: f.jsonl\n" +
		"feedback_token_file: " + tokens + "\ndecision_id_key_file: " + key + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c2, err := ParseFileConfig([]byte("decision_log_mask: query, text\n")); err != nil || strings.Join(c2.DecisionLogMask, ",") != "query,text" {
		t.Fatalf("a comma-separated mask: %v %v", c2, err)
	}
	o, err := c.Options()
	if err != nil {
		t.Fatal(err)
	}
	want := DecisionLogOptions{Path: "d.jsonl", Request: true, Mask: []string{"query"}, MaxLineBytes: 65536, MaxBytes: 1000000, Keep: 3}
	if o.DecisionLog.Path != want.Path || !o.DecisionLog.Request || strings.Join(o.DecisionLog.Mask, ",") != "query" ||
		o.DecisionLog.MaxLineBytes != want.MaxLineBytes || o.DecisionLog.MaxBytes != want.MaxBytes || o.DecisionLog.Keep != 3 ||
		o.FeedbackLog != "f.jsonl" || strings.Join(o.FeedbackTokens, ",") != "first-token-0123456789,second-token-0123456789" ||
		string(o.DecisionIDKey) != "0123456789abcdef0123456789abcdef" {
		t.Fatalf("options %+v %+v", o.DecisionLog, o)
	}

	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("too short\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("# nothing\n\n"), 0o600)
	for doc, want := range map[string]string{
		"decision_log_mask: [queries]\n":                    `decision_log_mask: unknown group "queries"`,
		"decision_log_mask: {query: 1}\n":                   "decision_log_mask: want a list",
		"feedback_token_file: " + filepath.Join(dir, "no"):  "feedback_token_file: open",
		"feedback_token_file: " + empty + "\n":              "holds no token",
		"decision_id_key_file: " + short + "\n":             "fewer than 32 bytes",
		"decision_id_key_file: " + filepath.Join(dir, "no"): "decision_id_key_file: open",
	} {
		c, err := ParseFileConfig([]byte(doc))
		if err == nil {
			_, err = c.Options()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
}
