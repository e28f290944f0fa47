package server

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// TracingConfig is the tracing: section of the configuration file. Each key
// set here (or by its flag) wins over the OpenTelemetry environment
// variable it stands for; every other OTEL_* variable the SDK reads
// (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION, _CERTIFICATE,
// OTEL_BSP_*, ...) applies as the SDK documents it.
type TracingConfig struct {
	// Enabled: true exports traces, false never does; absent: on when
	// OTEL_TRACES_EXPORTER=otlp. OTEL_SDK_DISABLED=true turns tracing off
	// whatever this says.
	Enabled *bool `yaml:"enabled"`
	// Endpoint is the collector's OTLP base URL, as
	// OTEL_EXPORTER_OTLP_ENDPOINT: http://collector:4318 (http/protobuf;
	// /v1/traces is appended) or http://collector:4317 (grpc). An http://
	// URL is sent in plain text, https:// over TLS.
	Endpoint string `yaml:"endpoint"`
	// Protocol is grpc or http/protobuf (OTEL_EXPORTER_OTLP_PROTOCOL;
	// default http/protobuf).
	Protocol string `yaml:"protocol"`
	// ServiceName is the service.name resource attribute
	// (OTEL_SERVICE_NAME; default ctxgate).
	ServiceName string `yaml:"service_name"`
	// SampleRatio samples this fraction of the traces that start at the
	// gateway, and follows the caller's decision for the others
	// (parentbased_traceidratio); absent: OTEL_TRACES_SAMPLER, default
	// parentbased_always_on.
	SampleRatio *float64 `yaml:"sample_ratio"`
	// Headers go with every export (an API key); they replace
	// OTEL_EXPORTER_OTLP_HEADERS.
	Headers map[string]string `yaml:"headers"`
	// GenAIProvider is gen_ai.provider.name on the upstream call's span
	// (default openai: the API the gateway speaks; azure.ai.openai,
	// gcp.vertex_ai, ... name the service behind it).
	GenAIProvider string `yaml:"gen_ai_provider"`
}

// Protocols the OTLP trace exporters speak.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http/protobuf"
)

// Tracing is the tracer provider StartTracing built. Shutdown exports the
// spans still queued.
type Tracing struct {
	Provider *sdktrace.TracerProvider
	Protocol string
	Endpoint string // as configured; empty: the exporter's own default or OTEL_EXPORTER_OTLP_*ENDPOINT
}

// Shutdown flushes the spans still queued and stops the exporter, within
// ctx. Safe on nil.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.Provider.Shutdown(ctx)
}

// StartTracing builds the tracer provider the config and the environment
// (getenv, os.Getenv in ctxgate serve) ask for, or nil when tracing is
// off. version is service.version. Nothing is dialled here: the exporter
// connects when it first exports, and a collector that is down costs
// dropped spans and a log line, never a request.
func StartTracing(ctx context.Context, c TracingConfig, version string, getenv func(string) string) (*Tracing, error) {
	on, err := tracingOn(c, getenv)
	if err != nil || !on {
		return nil, err
	}
	protocol := strings.TrimSpace(c.Protocol)
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if protocol == "" {
			protocol = strings.TrimSpace(getenv(v))
		}
	}
	if protocol == "" {
		protocol = ProtocolHTTP
	}
	var endpoint *url.URL
	if c.Endpoint != "" {
		if endpoint, err = endpointURL(c.Endpoint); err != nil {
			return nil, err
		}
	}
	var exp *otlptrace.Exporter
	switch protocol {
	case ProtocolHTTP:
		var opts []otlptracehttp.Option
		if endpoint != nil {
			endpoint.Path = strings.TrimSuffix(endpoint.Path, "/") + "/v1/traces"
			opts = append(opts, otlptracehttp.WithEndpointURL(endpoint.String()))
		}
		if c.Headers != nil {
			opts = append(opts, otlptracehttp.WithHeaders(c.Headers))
		}
		exp, err = otlptracehttp.New(ctx, opts...)
	case ProtocolGRPC:
		var opts []otlptracegrpc.Option
		if endpoint != nil {
			opts = append(opts, otlptracegrpc.WithEndpointURL(endpoint.String()))
		}
		if c.Headers != nil {
			opts = append(opts, otlptracegrpc.WithHeaders(c.Headers))
		}
		exp, err = otlptracegrpc.New(ctx, opts...)
	default:
		return nil, errors.New("tracing: protocol " + strconv.Quote(protocol) + ": want grpc or http/protobuf (OTEL_EXPORTER_OTLP_PROTOCOL)")
	}
	if err != nil {
		return nil, errors.New("tracing: " + err.Error())
	}
	sampler, err := tracingSampler(c, getenv)
	if err != nil {
		return nil, err
	}
	res, err := tracingResource(ctx, c, version)
	if err != nil {
		exp.Shutdown(ctx)
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp), // OTEL_BSP_* apply
		sdktrace.WithSampler(sampler),
		sdktrace.WithResource(res),
	)
	return &Tracing{Provider: tp, Protocol: protocol, Endpoint: c.Endpoint}, nil
}

// tracingOn reads enabled, OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER.
func tracingOn(c TracingConfig, getenv func(string) string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	if c.Enabled != nil {
		return *c.Enabled, nil
	}
	on := false
	for _, e := range strings.Split(getenv("OTEL_TRACES_EXPORTER"), ",") {
		switch e = strings.TrimSpace(e); e {
		case "", "none":
		case "otlp":
			on = true
		default:
			return false, errors.New("tracing: OTEL_TRACES_EXPORTER=" + e + ": ctxgate exports traces over OTLP only (otlp, or none)")
		}
	}
	return on, nil
}

func endpointURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("tracing: endpoint: want the collector's base URL such as http://otel-collector:4318, got " + strconv.Quote(s))
	}
	return u, nil
}

// tracingSampler is the sampler sample_ratio or OTEL_TRACES_SAMPLER(_ARG)
// names; an unknown one is an error rather than the SDK's silent default.
func tracingSampler(c TracingConfig, getenv func(string) string) (sdktrace.Sampler, error) {
	if r := c.SampleRatio; r != nil {
		if *r < 0 || *r > 1 {
			return nil, errors.New("tracing: sample_ratio: want a fraction in [0, 1], got " + strconv.FormatFloat(*r, 'g', -1, 64))
		}
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(*r)), nil
	}
	name := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER"))
	ratio := func() (float64, error) {
		arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
		if arg == "" {
			return 1, nil
		}
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return 0, errors.New("tracing: OTEL_TRACES_SAMPLER_ARG=" + arg + ": want a fraction in [0, 1]")
		}
		return r, nil
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio", "parentbased_traceidratio":
		r, err := ratio()
		if err != nil {
			return nil, err
		}
		if name == "traceidratio" {
			return sdktrace.TraceIDRatioBased(r), nil
		}
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(r)), nil
	}
	return nil, errors.New("tracing: OTEL_TRACES_SAMPLER=" + name + ": want always_on, always_off, traceidratio or their parentbased_ forms")
}

// tracingResource is service.name ctxgate (OTEL_SERVICE_NAME, then
// service_name, override it), service.version, the host and
// OTEL_RESOURCE_ATTRIBUTES: with N replicas, host.name (the pod's name in
// Kubernetes) tells their spans apart.
func tracingResource(ctx context.Context, c TracingConfig, version string) (*resource.Resource, error) {
	opts := []resource.Option{
		resource.WithAttributes(semconv.ServiceName("ctxgate"), semconv.ServiceVersion(version)),
		resource.WithHost(),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME
	}
	if name := strings.TrimSpace(c.ServiceName); name != "" {
		opts = append(opts, resource.WithAttributes(semconv.ServiceName(name)))
	}
	res, err := resource.New(ctx, opts...)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, errors.New("tracing: resource: " + err.Error())
	}
	return res, nil
}
