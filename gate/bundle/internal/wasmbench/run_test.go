package wasmbench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

var (
	runMu    sync.Mutex
	runtimes = map[string]*compiled{}
)

// compiled is a module compiled once: wazero compiles a standard-Go module
// of several megabytes for seconds, instantiating it costs milliseconds.
type compiled struct {
	r   wazero.Runtime
	mod wazero.CompiledModule
}

func compile(t testing.TB, wasm []byte) *compiled {
	t.Helper()
	runMu.Lock()
	defer runMu.Unlock()
	sum := sha256.Sum256(wasm)
	key := string(sum[:])
	if c, ok := runtimes[key]; ok {
		return c
	}
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	mod, err := r.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatalf("compiling the module: %v", err)
	}
	c := &compiled{r, mod}
	runtimes[key] = c
	return c
}

// run executes a guest module in a fresh instance with the files of dir
// mounted at /data and returns its one line of output.
func run(t testing.TB, wasm []byte, dir, bundleName, trustName, mode string, n int) string {
	t.Helper()
	c := compile(t, wasm)
	ctx := context.Background()
	var out, errOut bytes.Buffer
	cfg := wazero.NewModuleConfig().WithName("").
		WithStdout(&out).WithStderr(&errOut).
		WithArgs("guest", "/data/"+bundleName, "/data/"+trustName, mode, strconv.Itoa(n)).
		WithFSConfig(wazero.NewFSConfig().WithReadOnlyDirMount(dir, "/data")).
		WithSysNanotime().WithSysWalltime()
	mod, err := c.r.InstantiateModule(ctx, c.mod, cfg)
	var exit *sys.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 0) {
		t.Fatalf("guest trapped or failed: %v\nstdout: %s\nstderr: %s", err, out.String(), errOut.String())
	}
	if mod != nil {
		mod.Close(ctx)
	}
	return strings.TrimSpace(out.String())
}

// verdict drops the timing from an "ok <sha> <ns>" line.
func verdict(line string) string {
	if f := strings.Fields(line); len(f) == 3 && f[0] == "ok" {
		return f[0] + " " + f[1]
	}
	return line
}

// nsPerOp reads the timing of an "ok <sha> <ns>" line.
func nsPerOp(t testing.TB, line string) float64 {
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "ok" {
		t.Fatalf("guest did not open the bundle: %s", line)
	}
	ns, err := strconv.ParseFloat(f[2], 64)
	if err != nil {
		t.Fatal(err)
	}
	return ns
}
