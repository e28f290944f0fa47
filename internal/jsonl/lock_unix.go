//go:build unix

package jsonl

import (
	"os"
	"syscall"
)

// lock takes an exclusive advisory lock on f (flock), released by unlock
// or when f is closed.
func lock(f *os.File) (unlock func(), err error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
}
