package main

import (
	"encoding/json"
	"flag"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/host"
)

func init() {
	register(command{name: "version", help: "print the version, the schema version and the embedded modules", run: runVersion})
}

// version is the release version, set at link time by make dist
// (-ldflags "-X main.version=v0.1.0"). Left empty, releaseVersion reads it
// from the build info instead: the module's version for a binary built by
// `go install github.com/ctxgate/ctxgate/cmd/ctxgate@v0.1.0`.
var version string

// releaseVersion is the version this binary reports.
func releaseVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v // a module version, or the go command's pseudo-version from git
	}
	rev, modified := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	v := "devel-" + rev[:min(12, len(rev))]
	if modified {
		v += "-dirty"
	}
	return v
}

// versionInfo is `ctxgate version --format json`: what the text says, by name.
type versionInfo struct {
	Version  string       `json:"version"`
	Gate     string       `json:"gate"`
	Schema   string       `json:"schema"`
	Go       string       `json:"go"`
	Platform string       `json:"platform"`
	Modules  []moduleJSON `json:"modules"`
}

// moduleJSON is one embedded module; size and sha256 are absent when it is
// not built.
type moduleJSON struct {
	Module string `json:"module"`
	File   string `json:"file"`
	Built  bool   `json:"built"`
	Size   int    `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

func runVersion(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ctxgate version", flag.ContinueOnError)
	// Text even into a pipe, unlike the other commands: `ctxgate --version |
	// head -1` is how a version is read by convention.
	var of outputFormat
	fs.StringVar(&of.value, "format", "text", "output `FORMAT`: text or json")
	if code, done := parseFlags(fs, args, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		io.WriteString(stderr, "ctxgate version: takes no arguments\n")
		return exitUsage
	}
	text, err := of.text(stdout)
	if err != nil {
		return fail(stderr, "version", err)
	}
	info := versionInfo{Version: releaseVersion(), Gate: gate.Version, Schema: gate.SchemaVersion,
		Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	for _, m := range host.Modules() {
		info.Modules = append(info.Modules, moduleJSON{Module: m.Module.String(), File: m.File, Built: m.Built, Size: m.Size, SHA256: m.SHA256})
	}
	if !text {
		b, _ := json.Marshal(info) // strings, ints and bools only: cannot fail
		stdout.Write(append(b, '\n'))
		return exitOK
	}
	var b strings.Builder
	b.WriteString("ctxgate " + info.Version + " (gate " + info.Gate + ", schema " + info.Schema +
		", " + info.Go + " " + info.Platform + ")\n")
	for _, m := range info.Modules {
		b.WriteString("module " + pad(m.Module, 7) + pad(m.File, 16))
		if !m.Built {
			b.WriteString("not built (run make modules)\n")
			continue
		}
		b.WriteString(pad(strconv.Itoa(m.Size)+" bytes", 15) + "sha256 " + m.SHA256 + "\n")
	}
	io.WriteString(stdout, b.String())
	return exitOK
}

func pad(s string, n int) string {
	if len(s) >= n {
		return s + " "
	}
	return s + strings.Repeat(" ", n-len(s))
}
