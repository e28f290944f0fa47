package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/config/trace/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/wasm/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/anypb"
	"gopkg.in/yaml.v3"
)

// TestEnvoyConfigAgainstAPI reads examples/envoy/envoy.yaml with Envoy's
// own API (go-control-plane's generated types, the protos Envoy parses its
// bootstrap with, at go-control-plane's envoy module v1.40.0): every field
// and enum value must exist (protojson rejects unknown ones, inside every
// typed_config too), the protoc-gen-validate rules must hold, and no field
// set anywhere may be marked deprecated (a proto3 field at its default value
// counts as unset, here as in Envoy's own deprecation warnings; abitest's
// TestExampleConfigs rejects a fail_open key outright). That is the check
// Envoy runs at startup, short of starting Envoy, which this machine does
// not have.
func TestEnvoyConfigAgainstAPI(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "examples", "envoy", "envoy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var b bootstrapv3.Bootstrap
	if err := (protojson.UnmarshalOptions{Resolver: protoregistry.GlobalTypes}).Unmarshal(js, &b); err != nil {
		t.Fatalf("envoy.yaml is not a valid Envoy bootstrap: %v", err)
	}
	if err := b.ValidateAll(); err != nil {
		t.Fatalf("envoy.yaml breaks the API's validation rules: %v", err)
	}
	var deprecated []string
	walk(t, b.ProtoReflect(), "", func(path string, fd protoreflect.FieldDescriptor) {
		if opts, ok := fd.Options().(*descriptorpb.FieldOptions); ok && opts.GetDeprecated() {
			deprecated = append(deprecated, path)
		}
	})
	if len(deprecated) > 0 {
		t.Errorf("envoy.yaml sets deprecated fields: %s", strings.Join(deprecated, ", "))
	}

	// The walk reaches into the typed configs, or it would prove nothing.
	var seen []string
	walk(t, b.ProtoReflect(), "", func(path string, _ protoreflect.FieldDescriptor) { seen = append(seen, path) })
	all := strings.Join(seen, " ")
	for _, want := range []string{".failure_policy", ".match_typed_subject_alt_names", ".trusted_ca", ".custom_tags.request_header",
		"(envoy.config.trace.v3.OpenTelemetryConfig).grpc_service", ".http2_protocol_options"} {
		if !strings.Contains(all, want) {
			t.Errorf("the walk never reached %s", want)
		}
	}
}

// walk calls f for every field set in m, through repeated fields, maps and
// google.protobuf.Any (unpacked with the global registry).
func walk(t *testing.T, m protoreflect.Message, path string, f func(string, protoreflect.FieldDescriptor)) {
	if a, ok := m.Interface().(*anypb.Any); ok {
		inner, err := a.UnmarshalNew()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		walk(t, inner.ProtoReflect(), path+"("+string(proto.MessageName(inner))+")", f)
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		p := path + "." + string(fd.Name())
		f(p, fd)
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len(); i++ {
				walk(t, v.List().Get(i).Message(), p, f)
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				walk(t, mv.Message(), p, f)
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			walk(t, v.Message(), p, f)
		}
		return true
	})
}
