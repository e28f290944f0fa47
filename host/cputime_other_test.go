//go:build !linux

package host

import "time"

// threadCPU is fn's wall time where thread CPU time is not available.
func threadCPU(fn func()) time.Duration {
	start := time.Now()
	fn()
	return time.Since(start)
}
