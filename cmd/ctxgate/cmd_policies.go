package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/internal/safefile"
	"github.com/ctxgate/ctxgate/policies"
)

func init() {
	register(command{name: "policies", help: "list the preset policies --policy NAME selects (name, version, description)", run: runPolicies})
}

// presetInfo is one preset as `ctxgate policies --format json` lists it.
// sha256 is the policy's identity, the policy.sha256 of its decisions.
type presetInfo struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description"`
	SHA256      string `json:"sha256"`
}

func runPolicies(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ctxgate policies", flag.ContinueOnError)
	var of outputFormat
	of.register(fs)
	fs.Usage = func() {
		io.WriteString(fs.Output(), "usage: ctxgate policies [--format json|text]\n\nThe presets --policy NAME selects, on eval, validate and serve.\n")
		fs.PrintDefaults()
	}
	if code, done := parseFlags(fs, args, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		io.WriteString(stderr, "ctxgate policies: takes no arguments\n")
		return exitUsage
	}
	text, err := of.text(stdout)
	if err != nil {
		return fail(stderr, "policies", err)
	}
	list, err := presets()
	if err != nil {
		return fail(stderr, "policies", err)
	}
	if !text {
		b, _ := json.Marshal(list) // strings only: cannot fail
		stdout.Write(append(b, '\n'))
		return exitOK
	}
	width := 0
	for _, p := range list {
		width = max(width, len(p.Name)+len(p.Version)+1)
	}
	var b strings.Builder
	for _, p := range list {
		label := p.Name + "@" + p.Version
		b.WriteString(label + strings.Repeat(" ", width-len(label)) + "  " + firstSentence(p.Description, 96) + "\n")
	}
	b.WriteString("\nctxgate eval --policy NAME uses one; docs/policy.md describes them.\n")
	io.WriteString(stdout, b.String())
	return exitOK
}

// presets reads every preset's name, version and description.
func presets() ([]presetInfo, error) {
	var out []presetInfo
	for _, name := range policies.Names() {
		raw, _ := policies.Get(name)
		var doc struct{ Name, Version, Description string }
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, errors.New("preset " + name + ": " + err.Error())
		}
		canon, err := bundle.Canonical(raw)
		if err != nil {
			return nil, errors.New("preset " + name + ": " + err.Error())
		}
		sum := sha256.Sum256(canon)
		out = append(out, presetInfo{Name: name, Version: doc.Version, Description: doc.Description, SHA256: hex.EncodeToString(sum[:])})
	}
	return out, nil
}

// firstSentence cuts s at its first sentence end, and to at most n runes.
func firstSentence(s string, n int) string {
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return clip(s, n)
}

// readPolicyArg reads a --policy value: the file at that path when there is
// one, else the preset of that name (serve reads --policy the same way). A
// value that is neither is an error that lists the presets; a value that
// looks like a path (it has a slash or a .json ending) is reported as a
// missing file. To load a file that has a preset's name, write ./NAME. Only
// a regular file of at most safefile.MaxPolicyBytes is read (serve's rule).
func readPolicyArg(v string) ([]byte, error) {
	b, err := safefile.Read(v, safefile.MaxPolicyBytes)
	if err == nil {
		if len(strings.TrimSpace(string(b))) == 0 {
			// Never the built-in default in place of a file.
			return nil, errors.New("policy " + quote(v) + " is empty")
		}
		return b, nil
	}
	isDir := false
	if st, serr := os.Stat(v); serr == nil && st.IsDir() {
		isDir = true
	}
	var refused *safefile.Error
	if !errors.Is(err, fs.ErrNotExist) && !isDir {
		if errors.As(err, &refused) {
			return nil, errors.New("policy " + err.Error())
		}
		return nil, err
	}
	if p, ok := policies.Get(v); ok {
		return p, nil
	}
	if isDir {
		return nil, errors.New("policy " + quote(v) + " is a directory, not a regular file")
	}
	if looksLikePath(v) {
		return nil, errors.New("policy file " + quote(v) + " does not exist")
	}
	return nil, errors.New("unknown policy " + quote(v) + ": no preset and no file of that name (presets: " +
		strings.Join(policies.Names(), ", ") + "; ctxgate policies describes them)")
}

func looksLikePath(v string) bool {
	return strings.ContainsRune(v, '/') || strings.ContainsRune(v, os.PathSeparator) || strings.HasSuffix(v, ".json")
}
