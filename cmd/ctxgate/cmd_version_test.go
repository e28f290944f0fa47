package main

import (
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/host"
)

func TestVersion(t *testing.T) {
	code, out, errs := cli(t, "", "version")
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if want := "ctxgate " + releaseVersion() + " (gate " + gate.Version + ", schema " + gate.SchemaVersion + ", "; !strings.HasPrefix(out, want) {
		t.Errorf("first line: %q, want prefix %q", out, want)
	}
	if _, dashed, _ := cli(t, "", "--version"); dashed != out {
		t.Errorf("--version printed %q, version %q", dashed, out)
	}
	for _, m := range host.Modules() {
		want := m.File + " "
		if m.Built {
			want = m.SHA256
		}
		if !strings.Contains(out, want) {
			t.Errorf("version does not report %s (%q):\n%s", m.Module, want, out)
		}
	}
}

// TestReleaseVersion: a version set at link time wins over the build info.
func TestReleaseVersion(t *testing.T) {
	defer func(v string) { version = v }(version)
	version = "v9.8.7"
	if got := releaseVersion(); got != "v9.8.7" {
		t.Errorf("releaseVersion() = %q with version set", got)
	}
	version = ""
	if got := releaseVersion(); got == "" {
		t.Error("releaseVersion() is empty without a link-time version")
	}
}
