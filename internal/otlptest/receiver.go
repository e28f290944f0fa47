package otlptest

import (
	"bufio"
	"fmt"
	"io"
)

// ServeReceiver runs a Collector for another process (cmd/otlpreceiver):
// it writes the gRPC and HTTP addresses on a line, then answers each
// "count" line read from in with the spans received so far and each
// "reset" with "ok", until in ends.
func ServeReceiver(in io.Reader, out io.Writer) error {
	c, stop, err := NewCollector()
	if err != nil {
		return err
	}
	defer stop()
	fmt.Fprintln(out, c.GRPC, c.HTTP)
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		switch sc.Text() {
		case "count":
			fmt.Fprintln(out, c.Sink.SpanCount())
		case "reset":
			c.Sink.Reset()
			fmt.Fprintln(out, "ok")
		}
	}
	return sc.Err()
}
