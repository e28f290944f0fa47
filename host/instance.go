package host

import (
	"context"
	"errors"
	"strconv"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/sys"
)

// instance is one live guest, used by one goroutine at a time. The Extism
// call path is the only implementation today; a raw-export path (the guest's
// exports called directly, without the kernel's input/output round trips)
// can implement the same two methods and slot in behind the pool unchanged.
type instance interface {
	// call runs export fn on input. A *GateError leaves the instance healthy;
	// any other error means it must be discarded.
	call(ctx context.Context, fn string, input []byte) ([]byte, error)
	close(ctx context.Context) error
}

// extismInstance runs the guest through the Extism kernel.
type extismInstance struct {
	p   *extism.Plugin
	out *tail // the guest's stdout and stderr, for trap messages
}

func newExtismInstance(ctx context.Context, c *extism.CompiledPlugin) (*extismInstance, error) {
	t := &tail{}
	// The default ModuleConfig gives the guest no clock, no randomness source
	// but a fixed one, no files and no environment: the gate needs none, and
	// a guest that cannot read the clock cannot decide differently over time.
	mc := wazero.NewModuleConfig().WithStdout(t).WithStderr(t)
	p, err := c.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: mc})
	if err != nil {
		return nil, err
	}
	p.SetLogger(func(extism.LogLevel, string) {}) // guest logs never reach the host's stderr
	return &extismInstance{p: p, out: t}, nil
}

func (x *extismInstance) call(ctx context.Context, fn string, input []byte) ([]byte, error) {
	x.out.reset()
	rc, out, err := x.p.CallWithContext(ctx, fn, input)
	if err == nil {
		if rc != 0 {
			// The PDK sets an error whenever a guest fails; a bare non-zero
			// return is a guest bug, so the instance is not trusted again.
			return nil, x.trap(fn, errors.New("guest returned "+strconv.FormatUint(uint64(rc), 10)+" without an error"))
		}
		return out, nil
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded, sys.ExitCodeContextCanceled:
			return nil, newTimeout(ctx)
		}
		return nil, x.trap(fn, err)
	}
	if ctx.Err() != nil {
		return nil, newTimeout(ctx)
	}
	// Extism reports a guest's error string and a runtime trap the same way
	// (an error value); only the guest writes the error JSON.
	if ge, ok := parseGuestError(err.Error()); ok {
		return nil, ge
	}
	return nil, x.trap(fn, err)
}

func (x *extismInstance) trap(fn string, err error) error {
	if s := x.out.String(); s != "" {
		err = errors.New(err.Error() + "\nguest output: " + s)
	}
	return &trapError{fn: fn, cause: err}
}

func (x *extismInstance) close(ctx context.Context) error { return x.p.Close(ctx) }

// tail keeps the last tailMax bytes written to it: enough for a panic message,
// bounded so a chatty guest cannot grow the host.
type tail struct{ b []byte }

const tailMax = 2048

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > tailMax {
		p = p[len(p)-tailMax:]
	}
	if over := len(t.b) + len(p) - tailMax; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	t.b = append(t.b, p...)
	return n, nil
}

func (t *tail) reset()         { t.b = t.b[:0] }
func (t *tail) String() string { return string(t.b) }
