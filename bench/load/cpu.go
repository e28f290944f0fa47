package main

import (
	"os"
	"runtime/pprof"
	"syscall"
	"time"
)

// cpuProfile is the -cpuprofile file: the measured run only, so the module's
// compilation and the warm-up do not drown the per-request costs.
var cpuProfile string

// measured runs the timed part of a load run: it profiles it when asked and
// adds the process's CPU time per decision. On a shared machine the
// throughput moves with everyone else's load; the CPU this process spent per
// decision (user + system, clients and in-process server together) moves
// much less, so it is the figure to compare between two builds.
func measured(run func() *result) (*result, error) {
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	before := cpuTime()
	res := run()
	res.CPUSeconds = (cpuTime() - before).Seconds()
	if ok := res.Requests - res.Errors; ok > 0 {
		res.CPUPerDecisionUS = res.CPUSeconds / float64(ok) * 1e6
	}
	return res, nil
}

// cpuTime is the user and system time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
