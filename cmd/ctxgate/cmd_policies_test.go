package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/policies"
)

// asTerminal makes the CLI treat stdout as a terminal for one test.
func asTerminal(t *testing.T) {
	t.Helper()
	saved := stdoutIsTerminal
	stdoutIsTerminal = func(io.Writer) bool { return true }
	t.Cleanup(func() { stdoutIsTerminal = saved })
}

// policies lists every preset with its version, description and the sha256
// its decisions report; text on a terminal, JSON otherwise.
func TestPolicies(t *testing.T) {
	code, out, errs := cli(t, "", "policies")
	if code != exitOK {
		t.Fatalf("policies: exit %d %s", code, errs)
	}
	var list []presetInfo
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("not a pipe's JSON: %v\n%s", err, out)
	}
	if len(list) != len(policies.Names()) {
		t.Fatalf("%d presets listed, want %d", len(list), len(policies.Names()))
	}
	for i, p := range list {
		if p.Name != policies.Names()[i] || p.Version == "" || p.Description == "" || len(p.SHA256) != 64 {
			t.Errorf("preset %d: %+v", i, p)
		}
		_, dec, errs := cli(t, goodRequest, "eval", "--native", "--policy", p.Name)
		if !strings.Contains(dec, `"sha256":"`+p.SHA256+`"`) {
			t.Errorf("%s: sha256 %s is not the one its decisions report: %s %s", p.Name, p.SHA256, dec, errs)
		}
	}

	_, text, _ := cli(t, "", "policies", "--format", "text")
	asTerminal(t)
	_, auto, _ := cli(t, "", "policies")
	if auto != text {
		t.Fatalf("on a terminal the default is not text:\n%s", auto)
	}
	lines := strings.Split(text, "\n")
	for i, p := range list {
		if !strings.HasPrefix(lines[i], p.Name+"@"+p.Version+" ") || len(lines[i]) > 140 {
			t.Errorf("text line %d: %q", i, lines[i])
		}
	}
	if code, _, errs := cli(t, "", "policies", "--format", "yaml"); code != exitUsage || !strings.Contains(errs, "--format must be json or text") {
		t.Fatalf("--format yaml: exit %d %q", code, errs)
	}
	if code, _, _ := cli(t, "", "policies", "extra"); code != exitUsage {
		t.Fatalf("an argument: exit %d", code)
	}
}

// isTerminal: a character device is a terminal; files, pipes and buffers
// are not.
func TestIsTerminal(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	file, _ := os.Create(filepath.Join(t.TempDir(), "out"))
	defer file.Close()
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	for _, c := range []struct {
		name string
		w    io.Writer
		want bool
	}{{"char device", null, true}, {"file", file, false}, {"pipe", w, false}, {"buffer", &strings.Builder{}, false}} {
		if got := isTerminal(c.w); got != c.want {
			t.Errorf("%s: isTerminal %v", c.name, got)
		}
	}
}

// --policy: an existing file wins, then a preset; an unknown name lists the
// presets, a missing path says it is missing, a directory is never a policy.
func TestPolicyArgument(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.Mkdir("wikigr", 0o755) // a data directory named like a preset
	mine, _ := policies.Get("wikigr")
	os.WriteFile("support-agent", []byte(strings.Replace(string(mine), `"name": "wikigr"`, `"name": "mine"`, 1)), 0o644)
	for _, c := range []struct {
		policy string
		code   int
		want   string // in stdout for exit 0, else in stderr
	}{
		{"wikigr", exitOK, `"name":"wikigr"`},
		{"support-agent", exitOK, `"name":"mine"`},
		{"strict", exitFail, `unknown policy "strict": no preset and no file of that name (presets: default, wikigr, sufficient-context, support-agent, rag-confidence; ctxgate policies describes them)`},
		{"conf/strict.json", exitFail, `policy file "conf/strict.json" does not exist`},
		{"strict.json", exitFail, `policy file "strict.json" does not exist`},
		{".", exitFail, `policy "." is a directory`},
	} {
		code, out, errs := cli(t, goodRequest, "eval", "--native", "--policy", c.policy)
		got := out
		if c.code != exitOK {
			got = errs
		}
		if code != c.code || !strings.Contains(got, c.want) || (code != exitOK && !oneLine(errs)) {
			t.Errorf("--policy %s: exit %d, stdout %q, stderr %q; want exit %d and %q", c.policy, code, out, errs, c.code, c.want)
		}
	}
}
