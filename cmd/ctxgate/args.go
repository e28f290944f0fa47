package main

import (
	"errors"
	"flag"
	"io"
	"strings"
)

// parseFlags parses a subcommand's flags wherever they stand among its
// arguments, so `ctxgate eval req.json --policy wikigr` works as
// `ctxgate eval --policy wikigr req.json` does. Go's flag package stops at
// the first positional argument; parsing resumes after each one. A bare "--"
// ends the flags: everything after it is positional (a file named -x). Once
// it returns, fs.Args() holds the positional arguments in their order.
//
// -h prints the flags and exits 0, any other problem exits 2. done is true
// when the caller should return code.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, done bool) {
	fs.SetOutput(stderr)
	var positional []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitOK, true
			}
			return exitUsage, true
		}
		left := fs.Args()
		if endedByTerminator(fs, rest[:len(rest)-len(left)]) {
			positional = append(positional, left...)
			break
		}
		if len(left) == 0 {
			break
		}
		positional = append(positional, left[0])
		rest = left[1:]
	}
	// Parsing "--" first sets no flag and leaves fs.Args() = positional.
	fs.Parse(append([]string{"--"}, positional...))
	return 0, false
}

// endedByTerminator reports whether the arguments one fs.Parse consumed end
// with the "--" that stops flag parsing, rather than with "--" given as a
// flag's value (--policy --).
func endedByTerminator(fs *flag.FlagSet, consumed []string) bool {
	n := len(consumed)
	if n == 0 || consumed[n-1] != "--" {
		return false
	}
	return n == 1 || !takesValue(fs, consumed[n-2])
}

// takesValue reports whether arg is a flag that reads the next argument as
// its value: a known flag, not boolean, written without "=".
func takesValue(fs *flag.FlagSet, arg string) bool {
	if len(arg) < 2 || arg[0] != '-' || arg == "--" || strings.Contains(arg, "=") {
		return false
	}
	f := fs.Lookup(strings.TrimLeft(arg, "-"))
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}
