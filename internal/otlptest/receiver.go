package otlptest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The benchmarks' collector runs in a process of its own (this test
// binary, started again with receiverEnv set), as a collector runs beside
// a server: the benchmark's allocations are then the server's alone, and
// the receiver's decoding competes for the CPU as a sidecar's would.

const receiverEnv = "CTXGATE_OTLPTEST_RECEIVER"

func TestMain(m *testing.M) {
	if os.Getenv(receiverEnv) == "1" {
		os.Exit(serveReceiver(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// serveReceiver runs the collector, writes its gRPC and HTTP addresses,
// then answers each "count" line on in with the spans received, each
// "reset" with "ok", until in ends.
func serveReceiver(in io.Reader, out io.Writer) int {
	c, stop, err := newCollector()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	fmt.Fprintln(out, c.grpc, c.http)
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		switch sc.Text() {
		case "count":
			fmt.Fprintln(out, c.sink.SpanCount())
		case "reset":
			c.sink.Reset()
			fmt.Fprintln(out, "ok")
		}
	}
	return 0
}

// remoteCollector is a collector in its own process.
type remoteCollector struct {
	grpc, http string
	in         io.Writer
	out        *bufio.Reader
}

func startRemoteCollector(tb testing.TB) *remoteCollector {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), receiverEnv+"=1")
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
		tb.Fatalf("the receiver process wrote %q, want its two addresses", addrs)
	}
	r.grpc, r.http = addrs[0], addrs[1]
	return r
}

func (r *remoteCollector) line(tb testing.TB) string {
	tb.Helper()
	l, err := r.out.ReadString('\n')
	if err != nil {
		tb.Fatalf("the receiver process: %v", err)
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
