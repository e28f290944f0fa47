package main

import (
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// serveProc is `ctxgate serve` running in-process, as a user starts it.
type serveProc struct {
	base           string // http://127.0.0.1:PORT
	stdout, stderr lockedBuffer
	done           chan int
	stopOnce       sync.Once
	code           int
}

// startServe runs `ctxgate serve` with args (which should listen on port 0)
// and waits until it listens. The test's cleanup stops it if the test did
// not.
func startServe(t *testing.T, args []string) *serveProc {
	t.Helper()
	p := &serveProc{done: make(chan int, 1)}
	go func() { p.done <- run(args, strings.NewReader(""), &p.stdout, &p.stderr) }()
	deadline := time.Now().Add(30 * time.Second)
	for p.base == "" {
		if _, l, ok := strings.Cut(p.stdout.String(), "listening on "); ok {
			p.base = strings.TrimSpace(l)
		}
		select {
		case code := <-p.done:
			t.Fatalf("serve exited %d: %s", code, p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s", p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop sends the process SIGTERM, as a service manager would, and returns
// serve's exit code.
func (p *serveProc) stop(t *testing.T) int {
	p.stopOnce.Do(func() {
		syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
		select {
		case p.code = <-p.done:
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not stop on SIGTERM")
		}
	})
	return p.code
}
