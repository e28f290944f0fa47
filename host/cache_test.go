package host

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A cache directory that cannot be made or written is not fatal: the
// module compiles in memory, decides, and the process says so once per
// directory. A path under a regular file cannot be made even by root, and
// a directory without write permission stands for a read-only mount when
// the test does not run as root.
func TestCacheDirUnwritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("x"), 0o644)
	dirs := map[string]string{"under a file": filepath.Join(file, "cache")}
	if os.Geteuid() != 0 {
		ro := filepath.Join(t.TempDir(), "ro")
		os.Mkdir(ro, 0o555)
		dirs["read-only"] = ro
	}
	req := []byte(`{"query":"q","chunks":[{"id":"a","text":"q","scores":{"vector":0.9}}]}`)
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			var log bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&log, nil))
			for range 2 {
				g := newRealGate(t, ModuleTinyGo, Options{CacheDir: dir, Logger: logger, PoolSize: 1})
				if out, err := g.Evaluate(context.Background(), req); err != nil || !bytes.HasPrefix(out, []byte(`{"action":`)) {
					t.Fatalf("Evaluate: %v %s", err, out)
				}
			}
			lines := strings.Split(strings.TrimSpace(log.String()), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[0], "compiling in memory") ||
				!strings.Contains(lines[0], "dir="+dir) {
				t.Errorf("want one warning line naming %s, got:\n%s", dir, log.String())
			}
		})
	}
}

// A writable directory is used: wazero's files appear in it, and nothing is
// logged.
func TestCacheDirWritable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "cache")
	var log bytes.Buffer
	newRealGate(t, ModuleTinyGo, Options{CacheDir: dir, Logger: slog.New(slog.NewTextHandler(&log, nil)), PoolSize: 1})
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "wazero-") {
		t.Fatalf("cache dir %s: %v %v", dir, entries, err)
	}
	if log.Len() != 0 {
		t.Errorf("logged: %s", log.String())
	}
}
