package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/host"
)

const goodRequest = `{"query":"how do I rotate the signing key","chunks":[` +
	`{"id":"c1","doc_id":"ops","text":"To rotate the signing key, generate a new key pair and publish it before retiring the old one.","scores":{"vector":0.82,"bm25":7.1}},` +
	`{"id":"c2","doc_id":"faq","text":"Key rotation happens every ninety days.","scores":{"vector":0.55,"bm25":2.3}}]}`

// modes are the three ways eval can run; each must print the same bytes.
var modes = []string{"native", "tinygo", "go"}

func modeFlags(t *testing.T, mode string) []string {
	if mode == "native" {
		return []string{"--native"}
	}
	return wasmFlags(t, mode)
}

func TestEvalPrintsTheDecision(t *testing.T) {
	n, err := host.NewNative(nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := n.Evaluate(context.Background(), []byte(goodRequest))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "req.json")
	os.WriteFile(file, []byte(goodRequest), 0o644)
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			f := modeFlags(t, mode)
			for _, args := range [][]string{append(f, "-"), append(f, file), f} {
				code, out, errs := cli(t, goodRequest, append([]string{"eval"}, args...)...)
				if code != exitOK || out != string(want)+"\n" || errs != "" {
					t.Fatalf("eval %v: exit %d\nstdout %s\nstderr %s\nwant %s", args, code, out, errs, want)
				}
			}
		})
	}
}

func TestEvalPolicyFlag(t *testing.T) {
	code, out, errs := cli(t, goodRequest, "eval", "--native", "--policy", "wikigr")
	if code != exitOK || !strings.Contains(out, `"name":"wikigr"`) {
		t.Fatalf("preset policy: exit %d, %s %s", code, out, errs)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"name":`), 0o644)
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			args := append([]string{"eval", "--policy", bad}, modeFlags(t, mode)...)
			code, out, errs := cli(t, goodRequest, args...)
			if code != exitFail || out != "" || !oneLine(errs) || !strings.Contains(errs, "bad_policy") {
				t.Fatalf("bad policy file: exit %d, stdout %q, stderr %q", code, out, errs)
			}
		})
	}
	if code, _, errs := cli(t, goodRequest, "eval", "--native", "--policy", "no-such-file.json"); code != exitFail || !oneLine(errs) {
		t.Fatalf("missing policy: exit %d, stderr %q", code, errs)
	}
}

// Bad input: exit 1, nothing on stdout, one line on stderr naming the
// problem, in every mode.
func TestEvalBadInput(t *testing.T) {
	cases := []struct {
		name, input, want string
	}{
		{"malformed", `{"query":`, "bad_json"},
		{"wrong type", `{"query":3,"chunks":[]}`, "query"},
		{"wrong chunk field", `{"query":"q","chunks":[{"id":"a","text":"t","scores":{"vector":"high"}}]}`, "chunks[0].scores.vector"},
		{"empty body", ``, "bad_json"},
		{"huge body", `{"query":"` + strings.Repeat("a", host.DefaultMaxInputBytes) + `"}`, "larger than"},
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			f := modeFlags(t, mode)
			for _, tc := range cases {
				code, out, errs := cli(t, tc.input, append([]string{"eval"}, f...)...)
				if code != exitFail || out != "" || !oneLine(errs) || !strings.Contains(errs, tc.want) {
					t.Errorf("%s: exit %d, stdout %.80q, stderr %q; want exit 1 and %q", tc.name, code, out, errs, tc.want)
				}
			}
		})
	}
}

func TestEvalUsage(t *testing.T) {
	for _, args := range [][]string{
		{"eval", "a.json", "b.json"},
		{"eval", "--no-such-flag"},
		{"eval", "--module", "rust"},
		{"validate", "a", "b"},
		{"version", "extra"},
	} {
		if code, out, errs := cli(t, goodRequest, args...); code != exitUsage || out != "" || errs == "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2", args, code, out, errs)
		}
	}
	if code, _, errs := cli(t, "", "eval", "--native", "/no/such/request.json"); code != exitFail || !oneLine(errs) {
		t.Errorf("missing request file: exit %d, stderr %q", code, errs)
	}
}

func oneLine(s string) bool {
	return s != "" && strings.Count(s, "\n") == 1 && strings.HasSuffix(s, "\n")
}

// The built binary, run as a user would: the exit codes reach the shell.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI")
	}
	bin := filepath.Join(t.TempDir(), "ctxgate")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	runBin := func(stdin string, args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	if code, out, _ := runBin(goodRequest, "eval", "--native"); code != 0 || !strings.HasPrefix(out, `{"action":`) {
		t.Errorf("eval --native: exit %d, %q", code, out)
	}
	if code, _, errs := runBin(`{"query":3}`, "eval", "--native"); code != 1 || !oneLine(errs) {
		t.Errorf("bad request: exit %d, stderr %q", code, errs)
	}
	if code, _, _ := runBin("", "eval", "--bogus"); code != 2 {
		t.Errorf("bad flag: exit %d", code)
	}
	if code, out, _ := runBin("", "version"); code != 0 || !strings.HasPrefix(out, "ctxgate ") {
		t.Errorf("version: exit %d, %q", code, out)
	}
}
