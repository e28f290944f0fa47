package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartTracing: the tracing: section and the OTEL_* variables decide
// whether traces are exported, how, and which settings are refused.
func TestStartTracing(t *testing.T) {
	cases := []struct {
		name     string
		yaml     string // the tracing: section's body
		env      map[string]string
		protocol string // "": off
		err      string
	}{
		{name: "off by default"},
		{name: "OTEL_TRACES_EXPORTER=otlp", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, protocol: ProtocolHTTP},
		{name: "none", env: map[string]string{"OTEL_TRACES_EXPORTER": "none"}},
		{name: "a list with otlp", env: map[string]string{"OTEL_TRACES_EXPORTER": "none, otlp"}, protocol: ProtocolHTTP},
		{name: "SDK disabled", yaml: "enabled: true", env: map[string]string{"OTEL_SDK_DISABLED": "TRUE"}},
		{name: "config on", yaml: "enabled: true", protocol: ProtocolHTTP},
		{name: "config off wins", yaml: "enabled: false", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}},
		{name: "grpc from the environment", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, protocol: ProtocolGRPC},
		{name: "the traces protocol wins", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, protocol: ProtocolHTTP},
		{name: "config protocol wins", yaml: "enabled: true\n  protocol: grpc\n  endpoint: http://127.0.0.1:4317",
			env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, protocol: ProtocolGRPC},
		{name: "endpoint and headers", yaml: "enabled: true\n  endpoint: https://collector.example:4318/otlp\n  headers: {api-key: k}\n  sample_ratio: 0.25",
			protocol: ProtocolHTTP},
		{name: "other exporter", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: "OTEL_TRACES_EXPORTER=zipkin: ctxgate exports traces over OTLP only"},
		{name: "http/json", yaml: "enabled: true\n  protocol: http/json", err: `protocol "http/json": want grpc or http/protobuf`},
		{name: "endpoint without scheme", yaml: "enabled: true\n  endpoint: collector:4318", err: "endpoint: want the collector's base URL"},
		{name: "ratio out of range", yaml: "enabled: true\n  sample_ratio: 2", err: "sample_ratio: want a fraction in [0, 1], got 2"},
		{name: "unknown sampler", yaml: "enabled: true", env: map[string]string{"OTEL_TRACES_SAMPLER": "xray"}, err: "OTEL_TRACES_SAMPLER=xray"},
		{name: "bad sampler arg", yaml: "enabled: true", env: map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "half"},
			err: "OTEL_TRACES_SAMPLER_ARG=half"},
		{name: "ratio sampler", yaml: "enabled: true", env: map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.5"}, protocol: ProtocolHTTP},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fc, err := ParseFileConfig([]byte("tracing:\n  " + tc.yaml + "\n"))
			if tc.yaml == "" {
				fc, err = ParseFileConfig(nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			tr, err := StartTracing(t.Context(), fc.Tracing, "v0.0.0-test", func(k string) string { return tc.env[k] })
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			case err != nil:
				t.Fatal(err)
			case tc.protocol == "" && tr != nil:
				t.Fatalf("tracing on (%s), want off", tr.Protocol)
			case tc.protocol == "":
				return
			case tr == nil:
				t.Fatalf("tracing off, want %s", tc.protocol)
			}
			defer tr.Shutdown(t.Context())
			if tr.Protocol != tc.protocol {
				t.Fatalf("protocol %s, want %s", tr.Protocol, tc.protocol)
			}
		})
	}
}

// TestTracingResource: service.name is ctxgate unless OTEL_SERVICE_NAME
// says otherwise, and service_name wins over both; OTEL_RESOURCE_ATTRIBUTES
// adds to it (how N replicas are told apart beside host.name).
func TestTracingResource(t *testing.T) {
	read := func(c TracingConfig) map[string]string {
		t.Helper()
		res, err := tracingResource(t.Context(), c, "v1.2.3")
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, kv := range res.Attributes() {
			m[string(kv.Key)] = kv.Value.Emit()
		}
		return m
	}
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	if m := read(TracingConfig{}); m["service.name"] != "ctxgate" || m["service.version"] != "v1.2.3" || m["host.name"] == "" {
		t.Fatalf("default resource %v", m)
	}
	t.Setenv("OTEL_SERVICE_NAME", "rag-gate")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=prod,k8s.pod.name=ctxgate-7f9c")
	if m := read(TracingConfig{}); m["service.name"] != "rag-gate" || m["k8s.pod.name"] != "ctxgate-7f9c" || m["deployment.environment.name"] != "prod" {
		t.Fatalf("resource from the environment %v", m)
	}
	if m := read(TracingConfig{ServiceName: "gate-eu"}); m["service.name"] != "gate-eu" {
		t.Fatalf("service_name %v", m)
	}
}

// TestExampleTracingBlock: the commented tracing block of
// examples/serve/ctxgate.yaml, uncommented, is a configuration that starts.
func TestExampleTracingBlock(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "serve", "ctxgate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "\n# tracing:\n")
	if i < 0 {
		t.Fatal("no commented tracing block")
	}
	block, _, _ := strings.Cut(text[i+1:], "\n\n")
	fc, err := ParseFileConfig([]byte(strings.ReplaceAll("\n"+block, "\n# ", "\n")))
	if err != nil {
		t.Fatal(err)
	}
	c := fc.Tracing
	if c.Enabled == nil || !*c.Enabled || c.Endpoint != "http://127.0.0.1:4318" || c.Protocol != ProtocolHTTP || *c.SampleRatio != 1 {
		t.Fatalf("tracing block %+v", c)
	}
	tr, err := StartTracing(t.Context(), c, "test", func(string) string { return "" })
	if err != nil || tr == nil {
		t.Fatalf("the example block does not start: %v", err)
	}
	tr.Shutdown(t.Context())
}
