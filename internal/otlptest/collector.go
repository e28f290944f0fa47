package otlptest

import (
	"context"
	"net"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// Collector is the OpenTelemetry Collector's own OTLP receiver (the code
// the otelcol binaries run), listening on 127.0.0.1 over gRPC and HTTP and
// keeping what it receives in Sink.
type Collector struct {
	GRPC, HTTP string // host:port
	Sink       *consumertest.TracesSink
}

// NewCollector starts a receiver on two free ports; stop shuts it down.
func NewCollector() (c *Collector, stop func(), err error) {
	grpcAddr, err := freeAddr()
	if err != nil {
		return nil, nil, err
	}
	httpAddr, err := freeAddr()
	if err != nil {
		return nil, nil, err
	}
	c = &Collector{GRPC: grpcAddr, HTTP: httpAddr, Sink: new(consumertest.TracesSink)}
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = c.GRPC
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = c.HTTP
	r, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, c.Sink)
	if err != nil {
		return nil, nil, err
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		return nil, nil, err
	}
	return c, func() { r.Shutdown(context.Background()) }, nil
}

// freeAddr is a 127.0.0.1 port nothing listens on (the receiver takes an
// address, not a listener).
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
