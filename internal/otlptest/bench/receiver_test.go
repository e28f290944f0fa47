package bench

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// remoteCollector is cmd/otlpreceiver, the Collector's OTLP receiver in a
// process of its own.
type remoteCollector struct {
	GRPC, HTTP string
	in         io.Writer
	out        *bufio.Reader
}

func startRemoteCollector(tb testing.TB) *remoteCollector {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "otlpreceiver")
	build := exec.Command("go", "build", "-o", bin, "../cmd/otlpreceiver")
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("go build ../cmd/otlpreceiver: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	r := &remoteCollector{in: in, out: bufio.NewReader(stdout)}
	addrs := strings.Fields(r.line(tb))
	if len(addrs) != 2 {
		tb.Fatalf("otlpreceiver wrote %q, want its two addresses", addrs)
	}
	r.GRPC, r.HTTP = addrs[0], addrs[1]
	return r
}

func (r *remoteCollector) line(tb testing.TB) string {
	tb.Helper()
	l, err := r.out.ReadString('\n')
	if err != nil {
		tb.Fatalf("otlpreceiver: %v", err)
	}
	return strings.TrimSpace(l)
}

func (r *remoteCollector) reset(tb testing.TB) {
	tb.Helper()
	io.WriteString(r.in, "reset\n")
	r.line(tb)
}

func (r *remoteCollector) spanCount(tb testing.TB) int {
	tb.Helper()
	io.WriteString(r.in, "count\n")
	n, err := strconv.Atoi(r.line(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return n
}
