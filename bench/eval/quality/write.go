package quality

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/ctxgate/ctxgate/bench/eval"
)

// ErrSkipped reports that the data was absent and nothing was written.
var ErrSkipped = errors.New("skipped: ../shared/data is absent; the quality report needs the labeled data")

// Regenerate evaluates every policy and writes the report to out (a path
// ending in .md; the plots go beside it). root "" means the module root above
// the working directory; dataDir "" means $CTXGATE_DATA or <root>/../shared/data.
// It returns ErrSkipped when the data is absent.
func Regenerate(root, dataDir, out string, log io.Writer) error {
	var err error
	if root == "" {
		if root, err = eval.FindRoot("."); err != nil {
			return errors.New("no go.mod above the working directory")
		}
	}
	if dataDir == "" {
		if dataDir, err = eval.FindDataDir(root); err != nil {
			return ErrSkipped
		}
	}
	if out == "" {
		out = filepath.Join(root, "docs", "quality.md")
	}
	rep, err := Evaluate(dataDir)
	if err != nil {
		return err
	}
	files := rep.Files()
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	dir := filepath.Dir(out)
	for _, p := range paths {
		dst := filepath.Join(dir, filepath.Base(p))
		if p == "docs/quality.md" {
			dst = out
		}
		if err := os.WriteFile(dst, files[p], 0o644); err != nil {
			return err
		}
		io.WriteString(log, "wrote "+dst+"\n")
	}
	readme := filepath.Join(root, "README.md")
	old, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	updated, ok := rep.SpliceReadme(old)
	if !ok {
		return errors.New("README.md has no quality block (" + ReadmeBegin + " ... " + ReadmeEnd + ")")
	}
	if err := os.WriteFile(readme, updated, 0o644); err != nil {
		return err
	}
	io.WriteString(log, "wrote the quality block of "+readme+"\n")
	return nil
}
