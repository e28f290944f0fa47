// Command gapslog writes a synthetic gap log (bench.GapLog) to stdout, for
// trying `ctxgate gaps report` at scale:
//
//	go run ./bench/cmd/gapslog -n 1000000 | bin/ctxgate gaps report --events - > report.md
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ctxgate/ctxgate/bench"
)

func main() {
	n := flag.Int("n", 1_000_000, "events to write")
	seed := flag.Uint64("seed", 1, "generator seed")
	flag.Parse()
	if err := bench.GapLog(os.Stdout, *n, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gapslog:", err)
		os.Exit(1)
	}
}
