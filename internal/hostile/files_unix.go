//go:build unix

package hostile

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
)

// File is a path where a policy, trust or key file is expected that must
// not be read as one: it blocks an open (a FIFO), never ends (/dev/zero), or
// claims gigabytes it does not occupy (a sparse file).
type File struct {
	Name string
	Path string
	// TooLarge: refused for its size; otherwise for its type.
	TooLarge bool
}

// SparseFileBytes is the size of the sparse file Files makes: 2 GiB that
// take no disk and cost whoever reads them whole 2 GiB of memory.
const SparseFileBytes = 2 << 30

// Files makes the hostile files in dir, each reached through the path a
// configuration would name. limit is the reader's bound: one file is a
// byte over it. A socket is left out where the system cannot make one at
// dir (a path too long for a socket address).
func Files(dir string, limit int64) ([]File, error) {
	p := func(name string) string { return filepath.Join(dir, name) }
	var out []File
	add := func(name, path string, tooLarge bool) { out = append(out, File{name, path, tooLarge}) }

	if err := syscall.Mkfifo(p("fifo"), 0o644); err != nil {
		return nil, err
	}
	add("FIFO with no writer", p("fifo"), false)
	if err := os.Symlink("/dev/zero", p("zero")); err != nil {
		return nil, err
	}
	add("symlink to /dev/zero", p("zero"), false)
	if err := os.Symlink("/dev/null", p("null")); err != nil {
		return nil, err
	}
	add("symlink to /dev/null", p("null"), false)
	if err := os.Mkdir(p("dir"), 0o755); err != nil {
		return nil, err
	}
	add("directory", p("dir"), false)
	if err := os.Symlink(p("dir"), p("dirlink")); err != nil {
		return nil, err
	}
	add("symlink to a directory", p("dirlink"), false)
	if err := sized(p("sparse"), SparseFileBytes); err != nil {
		return nil, err
	}
	add("2 GiB sparse file", p("sparse"), true)
	if err := sized(p("over"), limit+1); err != nil {
		return nil, err
	}
	add("one byte over the limit", p("over"), true)
	if ln, err := net.Listen("unix", p("sock")); err == nil {
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		add("unix socket", p("sock"), false)
	}
	return out, nil
}

// sized makes a file of n bytes that occupies (almost) no disk.
func sized(path string, n int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := f.Truncate(n); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
