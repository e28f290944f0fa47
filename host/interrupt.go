package host

import "errors"

// Interrupt says whether a running guest can be stopped at its deadline.
//
// Stopping one needs wazero's termination checks (WithCloseOnContextDone):
// the compiler then calls into the runtime at every loop header and function
// entry, which makes the bundled guest 4-8x slower (docs/performance.md).
// Without them Timeout is checked before a run and after it: an expired
// context never starts the guest, and a run that ends after the deadline
// returns ErrTimeout (the instance stays), but a run that never ends holds
// its goroutine and pool slot for ever.
type Interrupt int

const (
	// InterruptAuto, the default: checks for a module given in Options.Wasm,
	// none for the bundled modules. Every run of those ends: their input is
	// bounded (Options.MaxInputBytes and the policy's limits), their loops
	// are bounded by it, they are fuzzed natively and as Wasm, and the
	// slowest inputs we could build within the limits take well under the
	// default 1 s Timeout without checks (host/worstcase_bench_test.go),
	// less than they take with them.
	InterruptAuto Interrupt = iota
	// InterruptAlways keeps the checks for any module.
	InterruptAlways
	// InterruptNever drops them for any module: only for a module whose
	// every run ends; never for one you do not trust.
	InterruptNever
)

func (i Interrupt) String() string {
	switch i {
	case InterruptAuto:
		return "auto"
	case InterruptAlways:
		return "always"
	case InterruptNever:
		return "never"
	}
	return "Interrupt(?)"
}

// ParseInterrupt reads "auto", "always" or "never" (command-line flags).
func ParseInterrupt(s string) (Interrupt, error) {
	for _, i := range []Interrupt{InterruptAuto, InterruptAlways, InterruptNever} {
		if s == i.String() {
			return i, nil
		}
	}
	return InterruptAuto, errors.New(`ctxgate: interrupt must be "auto", "always" or "never", not "` + s + `"`)
}

// checks reports whether runs get wazero's termination checks.
func (o *Options) checks() bool {
	switch o.Interrupt {
	case InterruptAlways:
		return true
	case InterruptNever:
		return false
	}
	return o.Wasm != nil
}
