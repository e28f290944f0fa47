// Command otlpreceiver runs the OpenTelemetry Collector's OTLP receiver on
// 127.0.0.1 for the tracing benchmarks (internal/otlptest/bench), in a
// process of its own: see otlptest.ServeReceiver for its protocol.
package main

import (
	"fmt"
	"os"

	"github.com/ctxgate/ctxgate/internal/otlptest"
)

func main() {
	if err := otlptest.ServeReceiver(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "otlpreceiver:", err)
		os.Exit(1)
	}
}
