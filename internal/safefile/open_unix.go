//go:build unix

package safefile

import "syscall"

// openFlags: O_NONBLOCK makes opening a FIFO with no writer (or a device
// waiting for carrier) return at once instead of blocking the caller;
// O_NOCTTY keeps a terminal device from becoming the process's controlling
// terminal. Neither changes how a regular file reads.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
