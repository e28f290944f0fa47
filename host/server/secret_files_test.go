//go:build unix

package server

import (
	"errors"
	"testing"

	"github.com/ctxgate/ctxgate/internal/hostile"
	"github.com/ctxgate/ctxgate/internal/safefile"
)

// TestSecretFilesHostile: the configuration file, the feedback token file
// and the decision-id key file are read as policies are. A FIFO, a device
// or a sparse file of gigabytes at their path is refused at once, naming
// what it is, instead of blocking serve's start or exhausting its memory.
func TestSecretFilesHostile(t *testing.T) {
	files, err := hostile.Files(t.TempDir(), safefile.MaxPolicyBytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		var refused *safefile.Error
		if _, err := ReadFileConfig(f.Path); !errors.As(err, &refused) {
			t.Errorf("config file, %s: %v, want a refusal", f.Name, err)
		}
		for _, key := range []string{"feedback_token_file", "decision_id_key_file"} {
			c, err := ParseFileConfig([]byte(key + ": " + f.Path + "\n"))
			if err == nil {
				_, err = c.Options()
			}
			if !errors.As(err, &refused) {
				t.Errorf("%s, %s: %v, want a refusal", key, f.Name, err)
			}
		}
	}
}
