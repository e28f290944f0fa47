package gaps

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden reports in testdata/gaps")

const sampleDir = "../../testdata/gaps"

// The sample events (testdata/gaps/sample.jsonl) give exactly the golden
// reports next to them. Regenerate with:
//
//	go test ./host/gaps -run TestSampleGolden -update
func TestSampleGolden(t *testing.T) {
	f, err := os.Open(filepath.Join(sampleDir, "sample.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, _, err := ReadEvents(f, ReadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(evs, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	rf, err := os.Open(filepath.Join(sampleDir, "sample.retrieval.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	rts, _, err := ReadRetrievals(rf, ReadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Verify(rep, rts, ScoreJudge{Floor: 0.35}, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var md, js, page, vmd bytes.Buffer
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, rep, evs, HTMLOptions{Source: "sample.jsonl"}); err != nil {
		t.Fatal(err)
	}
	if err := WriteVerifyMarkdown(&vmd, res); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]byte{"sample.report.md": md.Bytes(), "sample.report.json": js.Bytes(), "sample.report.html": page.Bytes(),
		"sample.verify-scores.md": vmd.Bytes()} {
		checkGoldenFile(t, filepath.Join(sampleDir, name), got)
	}
}

// checkGoldenFile compares got with the file at path, or rewrites the file
// under -update.
func checkGoldenFile(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after checking the change)", path)
	}
}
