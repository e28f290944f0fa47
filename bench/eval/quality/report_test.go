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
		for _, x := range []struct {
			what string
			v    float64
		}{{"clapnq auroc", p.ClapHeld.AUROC}, {"dl19 chunk auroc", p.DL19Held.ChunkAUROC}} {
			if math.IsNaN(x.v) || x.v < 0 || x.v > 1 {
				t.Errorf("%s: %s = %v", p.Name, x.what, x.v)
			}
		}
		if p.ClapHeld.N == 0 || p.DL19Held.N == 0 {
			t.Errorf("%s: empty half", p.Name)
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
	for _, p := range rep.Policies {
		t.Logf("%-42s clapnq auroc tune %.3f held %.3f | dl19 chunk auroc tune %.3f held %.3f | clap HR %.3f ER %.3f",
			p.Name, p.ClapTune.AUROC, p.ClapHeld.AUROC, p.DL19Tune.ChunkAUROC, p.DL19Held.ChunkAUROC, p.ClapHeld.Op.HallucinationRate(), p.ClapHeld.Op.ErrorRate())
	}
}
