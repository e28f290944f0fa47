// Command evalset regenerates docs/quality.md and its plots from the labeled
// data in ../shared/data. It exits 0 with a message when the data is absent,
// so CI on a machine without the data skips rather than fails.
//
//	go run ./bench/eval/cmd/evalset [-root DIR] [-data DIR]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/ctxgate/ctxgate/bench/eval"
	"github.com/ctxgate/ctxgate/bench/eval/quality"
)

func main() {
	root := flag.String("root", "", "repository root (default: the directory holding go.mod above the working directory)")
	data := flag.String("data", "", "data directory (default: $CTXGATE_DATA or <root>/../shared/data)")
	flag.Parse()
	if err := run(*root, *data); err != nil {
		fmt.Fprintln(os.Stderr, "evalset:", err)
		os.Exit(1)
	}
}

func run(root, data string) error {
	var err error
	if root == "" {
		if root, err = eval.FindRoot("."); err != nil {
			return errors.New("no go.mod above the working directory; pass -root")
		}
	}
	if data == "" {
		data, err = eval.FindDataDir(root)
		if errors.Is(err, eval.ErrNoData) {
			fmt.Println("evalset: skipped:", err)
			return nil
		}
	}
	rep, err := quality.Evaluate(data)
	if err != nil {
		return err
	}
	files := rep.Files()
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := os.WriteFile(filepath.Join(root, p), files[p], 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", p)
	}
	return nil
}
