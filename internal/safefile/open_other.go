//go:build !unix

package safefile

// openFlags: no FIFOs or terminal devices to guard against at an ordinary
// path here.
const openFlags = 0
