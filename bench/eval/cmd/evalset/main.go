// Command evalset (`make quality`) regenerates docs/quality.md, its plots and
// README.md's quality block from the labeled data in ../shared/data. It exits 0 with a message
// when the data is absent, so CI without the data skips rather than fails.
//
//	go run ./bench/eval/cmd/evalset [-root DIR] [-data DIR] [-out docs/quality.md]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/ctxgate/ctxgate/bench/eval/quality"
)

func main() {
	root := flag.String("root", "", "repository root (default: the directory holding go.mod above the working directory)")
	data := flag.String("data", "", "data directory (default: $CTXGATE_DATA or <root>/../shared/data)")
	out := flag.String("out", "", "report path; plots are written beside it (default: <root>/docs/quality.md)")
	flag.Parse()
	err := quality.Regenerate(*root, *data, *out, os.Stdout)
	if errors.Is(err, quality.ErrSkipped) {
		fmt.Println("evalset:", err)
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "evalset:", err)
		os.Exit(1)
	}
}
