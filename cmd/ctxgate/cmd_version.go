package main

import (
	"flag"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/host"
)

func init() {
	register(command{name: "version", help: "print the version, the schema version and the embedded modules", run: runVersion})
}

func runVersion(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ctxgate version", flag.ContinueOnError)
	if code, done := parseFlags(fs, args, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		io.WriteString(stderr, "ctxgate version: takes no arguments\n")
		return exitUsage
	}
	var b strings.Builder
	b.WriteString("ctxgate " + gate.Version + " (schema " + gate.SchemaVersion + ", " + runtime.Version() + ")\n")
	for _, m := range host.Modules() {
		b.WriteString("module " + pad(m.Module.String(), 7) + pad(m.File, 16))
		if !m.Built {
			b.WriteString("not built (run make build)\n")
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
