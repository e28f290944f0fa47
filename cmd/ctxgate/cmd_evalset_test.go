package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEvalsetSkipsWithoutData(t *testing.T) {
	var out, errb bytes.Buffer
	t.Setenv("CTXGATE_DATA", filepath.Join(t.TempDir(), "absent"))
	if code := run([]string{"evalset", "-out", filepath.Join(t.TempDir(), "q.md")}, nil, &out, &errb); code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if !strings.Contains(out.String(), "skipped") {
		t.Errorf("stdout %q does not say it skipped", out.String())
	}
}

func TestEvalsetWritesReport(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "..", "..", "shared", "data", "clapnq-dev")); err != nil {
		t.Skip("skipping: ../shared/data is absent")
	}
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := run([]string{"evalset", "-out", filepath.Join(dir, "quality.md")}, nil, &out, &errb); code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	md, err := os.ReadFile(filepath.Join(dir, "quality.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| default |", "| wikigr |", "| rag-confidence |", "ClapNQ", "DL19"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, svg := range []string{"quality-clapnq.svg", "quality-dl19.svg"} {
		if _, err := os.Stat(filepath.Join(dir, svg)); err != nil {
			t.Errorf("plot %s not written beside the report: %v", svg, err)
		}
	}
}
