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
	if !strings.HasPrefix(out, "ctxgate "+gate.Version+" (schema "+gate.SchemaVersion+",") {
		t.Errorf("first line: %q", out)
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
