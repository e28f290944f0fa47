package quality

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxgate/ctxgate/bench/eval"
)

var update = flag.Bool("update", false, "rewrite docs/quality.md and its plots from the data")

// TestQualityReport regenerates the quality report from ../shared/data. With
// -update it writes docs/quality.md and docs/quality-*.svg; without, it
// checks the report is complete and sane and says whether the committed one
// is stale (a core change legitimately moves the numbers, so staleness is
// reported, not failed, unless CTXGATE_QUALITY_STRICT is set).
func TestQualityReport(t *testing.T) {
	root, err := eval.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := eval.FindDataDir(root)
	if errors.Is(err, eval.ErrNoData) {
		t.Skip("skipping the quality report: ../shared/data is absent")
	}
	rep, err := Evaluate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Policies) < 5 {
		t.Fatalf("got %d policies, want the 5 presets", len(rep.Policies))
	}
	for _, p := range rep.Policies {
		for _, g := range rep.Groups {
			for h, res := range p.Query[g.Name] {
				if res.Refused != "" && p.Name != "default" {
					continue // a preset that cannot read this retriever's scores, and says so
				}
				if res.N > 0 && (res.Pos == 0 || res.Pos == res.N) {
					continue // one label only (the off-topic families): no AUROC to check
				}
				if res.N == 0 || math.IsNaN(res.AUROC) || res.AUROC < 0 || res.AUROC > 1 {
					t.Errorf("%s, %s, half %d: %d requests, AUROC %v", p.Name, g.Name, h, res.N, res.AUROC)
				}
			}
		}
		if v := p.DL19Held.ChunkAUROC; math.IsNaN(v) || v < 0 || v > 1 {
			t.Errorf("%s: dl19 chunk auroc = %v", p.Name, v)
		}
	}
	files := rep.Files()
	again := rep.Files()
	for path, data := range files {
		if !bytes.Equal(data, again[path]) {
			t.Errorf("%s is not deterministic", path)
		}
		full := filepath.Join(root, path)
		if *update {
			if err := os.WriteFile(full, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(full)
		if err != nil || !bytes.Equal(old, data) {
			msg := path + " is stale: run go test ./bench/eval/quality -run TestQualityReport -update"
			if os.Getenv("CTXGATE_QUALITY_STRICT") != "" {
				t.Error(msg)
			} else {
				t.Log(msg)
			}
		}
	}
	readme := filepath.Join(root, "README.md")
	old, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	updated, ok := rep.SpliceReadme(old)
	switch {
	case !ok:
		t.Errorf("README.md has no quality block")
	case *update:
		if err := os.WriteFile(readme, updated, 0o644); err != nil {
			t.Fatal(err)
		}
	case !bytes.Equal(old, updated):
		msg := "README.md's quality block is stale: run make quality"
		if os.Getenv("CTXGATE_QUALITY_STRICT") != "" {
			t.Error(msg)
		} else {
			t.Log(msg)
		}
	}
	for _, p := range rep.Policies {
		c := p.Query["clapnq"]
		t.Logf("%-20s clapnq auroc tune %.3f held %.3f | dl19 chunk auroc tune %.3f held %.3f | nomiracl pooled held %.3f",
			p.Name, c[0].AUROC, c[1].AUROC, p.DL19Tune.ChunkAUROC, p.DL19Held.ChunkAUROC, p.NoMIRACLHeld.AUROC)
	}
}
