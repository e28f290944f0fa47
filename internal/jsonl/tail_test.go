package jsonl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCutTorn: a file is cut back to its last newline, whatever the
// fragment's length (across the 64 KiB read blocks too); a file that ends a
// line, or is empty, is left alone; one with no newline is emptied.
func TestCutTorn(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", ""},
		{"whole", "{\"a\":1}\n{\"b\":2}\n", "{\"a\":1}\n{\"b\":2}\n"},
		{"torn", "{\"a\":1}\n{\"b\":", "{\"a\":1}\n"},
		{"torn over blocks", "{\"a\":1}\n{\"b\":\"" + long, "{\"a\":1}\n"},
		{"no newline", "{\"b\":", ""},
		{"long fragment, no newline", long, ""},
		{"newline block-aligned", strings.Repeat("y", 64<<10-1) + "\n" + long, strings.Repeat("y", 64<<10-1) + "\n"},
	} {
		path := filepath.Join(t.TempDir(), "log.jsonl")
		os.WriteFile(path, []byte(c.in), 0o644)
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		cut, err := CutTorn(f, int64(len(c.in)))
		f.Close()
		got, _ := os.ReadFile(path)
		if err != nil || string(got) != c.want || cut != int64(len(c.in)-len(c.want)) {
			t.Errorf("%s: cut %d, err %v, left %d bytes, want %d", c.name, cut, err, len(got), len(c.want))
		}
	}
}

// TestAppendLine: the line lands on a line of its own after a torn one is
// cut, in a new file and an existing one.
func TestAppendLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gaps.jsonl")
	if err := AppendLine(path, []byte("{\"a\":1}\n")); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"b":`)
	f.Close()
	if err := AppendLine(path, []byte("{\"c\":3}\n")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "{\"a\":1}\n{\"c\":3}\n" {
		t.Errorf("%q", got)
	}
}
