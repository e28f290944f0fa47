//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/internal/hostile"
)

// Every hostile file is refused at once, for its type or its size, without
// reading it: the FIFO has no writer (a blocking open would wait forever),
// /dev/zero never ends, the sparse file claims 2 GiB.
func TestReadRefusesHostileFiles(t *testing.T) {
	const limit = 1 << 10
	files, err := hostile.Files(t.TempDir(), limit)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(f.Name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				b, err := Read(f.Path, limit)
				if err == nil {
					err = errors.New("read " + strconv.Itoa(len(b)) + " bytes")
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Read blocked")
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err %v (%T), want *Error", err, err)
			}
			want := NotRegular
			if f.TooLarge {
				want = TooLarge
			}
			if e.Reason != want || e.Path != f.Path {
				t.Errorf("%v: reason %s, want %s", err, e.Reason, want)
			}
		})
	}
}

// A regular file is read whole up to the limit, through a symlink too; one
// byte more is refused, and so is a missing file (as fs.ErrNotExist).
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.json")
	data := []byte(`{"name":"p"}`)
	os.WriteFile(path, data, 0o644)
	os.Symlink(path, filepath.Join(dir, "link"))
	for _, p := range []string{path, filepath.Join(dir, "link")} {
		b, err := Read(p, int64(len(data)))
		if err != nil || string(b) != string(data) {
			t.Errorf("%s: %q, %v", p, b, err)
		}
	}
	var e *Error
	if _, err := Read(path, int64(len(data))-1); !errors.As(err, &e) || e.Reason != TooLarge {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "missing"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}
