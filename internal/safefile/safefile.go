// Package safefile reads the small files that configure ctxgate (policies,
// signed bundles, trust and key files) so that whoever can write their path
// cannot make the reader hang or exhaust memory: only a regular file is
// read, its open never blocks (a FIFO with no writer, a device), and at most
// a bounded number of bytes are read.
package safefile

import (
	"io"
	"io/fs"
	"os"
	"strconv"
)

// MaxPolicyBytes bounds a policy, a signed bundle, a trust file or a key
// file. The largest shipped policy is under 8 KiB and a hybrid bundle adds
// about 5 KiB of signatures, so 4 MiB leaves room for anything legitimate
// while a symlink to /dev/zero or a sparse file of gigabytes costs nothing.
const MaxPolicyBytes = 4 << 20

// Reasons a file is refused (Error.Reason); they are the values of the
// server's ctxgate_policy_file_refused_total{reason} label.
const (
	NotRegular = "not_regular"
	TooLarge   = "too_large"
)

// Error is a file refused for what it is, not for a failure to read it.
type Error struct {
	Path   string
	Reason string // NotRegular or TooLarge
	Msg    string // "is a named pipe (FIFO)", "is larger than 4194304 bytes"
}

func (e *Error) Error() string { return strconv.Quote(e.Path) + " " + e.Msg }

// Read returns the contents of the regular file at path (a symlink is
// followed; what it points to must be a regular file), of at most limit
// bytes. The file is opened without blocking and checked with fstat before
// any byte is read; a file that grows past limit while it is read is
// refused too. A refusal is an *Error; a missing file matches
// fs.ErrNotExist.
func Read(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		// A socket cannot be opened (ENXIO): name it for what it is.
		if st, serr := os.Stat(path); serr == nil && !st.Mode().IsRegular() {
			return nil, notRegular(path, st.Mode())
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	if st.Size() > limit {
		return nil, tooLarge(path, limit)
	}
	// The size is checked again on what is read: the file may grow between
	// fstat and the read.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(path, limit)
	}
	return b, nil
}

func notRegular(path string, m fs.FileMode) *Error {
	return &Error{Path: path, Reason: NotRegular, Msg: "is " + describe(m) + ", not a regular file"}
}

func tooLarge(path string, limit int64) *Error {
	return &Error{Path: path, Reason: TooLarge, Msg: "is larger than " + strconv.FormatInt(limit, 10) + " bytes"}
}

// describe names a file type for a person.
func describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file (" + m.Type().String() + ")"
}
