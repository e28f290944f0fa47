package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Flags may stand before, between and after positional arguments; "--" ends
// the flags, unless it is a flag's value.
func TestParseFlagsInterleaved(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		policy     string
		native     bool
		positional []string
		code       int
		done       bool
	}{
		{args: []string{"req.json", "--policy", "wikigr"}, policy: "wikigr", positional: []string{"req.json"}},
		{args: []string{"--policy", "wikigr", "req.json"}, policy: "wikigr", positional: []string{"req.json"}},
		{args: []string{"a", "--native", "b", "--policy=p", "c"}, policy: "p", native: true, positional: []string{"a", "b", "c"}},
		{args: []string{"-", "--native"}, native: true, positional: []string{"-"}},
		{args: []string{"--native", "--", "--policy", "x"}, native: true, positional: []string{"--policy", "x"}},
		{args: []string{"a", "--", "-b"}, positional: []string{"a", "-b"}},
		{args: []string{"--policy", "--", "req.json"}, policy: "--", positional: []string{"req.json"}},
		{args: []string{"req.json", "--frobnicate"}, code: exitUsage, done: true},
		{args: []string{"req.json", "--policy"}, code: exitUsage, done: true},
		{args: []string{"req.json", "-h"}, code: exitOK, done: true},
		{args: nil},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			policy := fs.String("policy", "", "")
			native := fs.Bool("native", false, "")
			code, done := parseFlags(fs, tc.args, io.Discard)
			if code != tc.code || done != tc.done {
				t.Fatalf("code %d done %v, want %d %v", code, done, tc.code, tc.done)
			}
			if done {
				return
			}
			if *policy != tc.policy || *native != tc.native || !slices.Equal(fs.Args(), tc.positional) {
				t.Fatalf("policy %q native %v positional %q; want %q %v %q", *policy, *native, fs.Args(), tc.policy, tc.native, tc.positional)
			}
		})
	}
}

// Every subcommand takes its flags after its arguments (issue: `eval
// req.json --policy wikigr` said "one REQUEST.json at most").
func TestFlagsAfterFile(t *testing.T) {
	dir := t.TempDir()
	req := filepath.Join(dir, "req.json")
	os.WriteFile(req, []byte(goodRequest), 0o644)
	code, out, errs := cli(t, "", "eval", req, "--policy", "wikigr", "--native", "--format", "json")
	if code != exitOK || !strings.Contains(out, `"name":"wikigr"`) {
		t.Fatalf("eval FILE --policy: exit %d %s %s", code, out, errs)
	}
	if code, _, errs := cli(t, "", "eval", req, "--native", req); code != exitUsage || !strings.Contains(errs, "one REQUEST.json at most") {
		t.Fatalf("two requests: exit %d %s", code, errs)
	}
	if code, out, errs := ctl(t, "keygen", "--out", filepath.Join(dir, "k")); code != exitOK {
		t.Fatalf("keygen: %s %s", out, errs)
	}
	pol := filepath.Join(dir, "policy.json")
	os.WriteFile(pol, []byte(`{"name":"p","version":"1"}`), 0o644)
	code, bundle, errs := ctl(t, "sign", pol, "--key", filepath.Join(dir, "k.key"))
	if code != exitOK {
		t.Fatalf("sign FILE --key: exit %d %s", code, errs)
	}
	os.WriteFile(filepath.Join(dir, "b.json"), []byte(bundle), 0o644)
	if code, out, errs := ctl(t, "verify", filepath.Join(dir, "b.json"), "--trust", filepath.Join(dir, "k.pub")); code != exitOK || !strings.HasPrefix(out, `{"verified":true`) {
		t.Fatalf("verify FILE --trust: exit %d %s %s", code, out, errs)
	}
}
