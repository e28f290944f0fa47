package main

import (
	"encoding/json"
	"runtime"
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

// version --format json says what the text says, by name; text stays the
// default even into a pipe (`ctxgate --version | head -1`).
func TestVersionJSON(t *testing.T) {
	code, out, errs := cli(t, "", "version", "--format", "json")
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var v versionInfo
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if v.Version != releaseVersion() || v.Gate != gate.Version || v.Schema != gate.SchemaVersion ||
		v.Go != runtime.Version() || v.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("version JSON %+v", v)
	}
	mods := host.Modules()
	if len(v.Modules) != len(mods) {
		t.Fatalf("%d modules, want %d", len(v.Modules), len(mods))
	}
	for i, m := range mods {
		got := v.Modules[i]
		if got.Module != m.Module.String() || got.File != m.File || got.Built != m.Built || got.Size != m.Size || got.SHA256 != m.SHA256 {
			t.Errorf("module %d: %+v, want %+v", i, got, m)
		}
	}
	if _, text, _ := cli(t, "", "version", "--format", "text"); !strings.HasPrefix(text, "ctxgate ") {
		t.Errorf("--format text: %q", text)
	}
	if code, _, errs := cli(t, "", "version", "--format", "yaml"); code != exitUsage || !strings.Contains(errs, "--format must be json or text") {
		t.Errorf("--format yaml: exit %d, %q", code, errs)
	}
}
