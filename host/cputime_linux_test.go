//go:build linux

package host

import (
	"runtime"
	"syscall"
	"time"
)

// threadCPU runs fn on one locked OS thread and returns the CPU time that
// thread spent: the guest runs on the calling goroutine, so this is the
// call's own work, whatever else the (shared, loaded) machine is running.
func threadCPU(fn func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var a, b syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_THREAD, &a)
	fn()
	syscall.Getrusage(syscall.RUSAGE_THREAD, &b)
	return time.Duration(b.Utime.Nano()-a.Utime.Nano()) + time.Duration(b.Stime.Nano()-a.Stime.Nano())
}
