package filter

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	def, err := ParseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   string
		want func(c *Config)
		err  string // substring of the error; "" means valid
	}{
		{name: "empty", in: "", want: func(*Config) {}},
		{name: "empty object", in: "{}", want: func(*Config) {}},
		{name: "all options", in: `{"policy":{"name":"p","version":"1"},"path_prefix":"/api/chat",
			"documents_path":"extra.docs","query_path":"input.question","max_body_bytes":2048,
			"on_oversize":"passthrough","fail_open":true,"soft_refusal_check":false,"trust_keys":["k"]}`,
			want: func(c *Config) {
				c.Policy = []byte(`{"name":"p","version":"1"}`)
				c.PathPrefix = "/api/chat"
				c.DocumentsPath = []string{"extra", "docs"}
				c.QueryPath = []string{"input", "question"}
				c.MaxBodyBytes = 2048
				c.RejectOversize = false
				c.FailOpen = true
				c.SoftRefusalCheck = false
				c.TrustKeys = []byte(`["k"]`)
			}},
		{name: "null policy is the default", in: `{"policy":null}`, want: func(*Config) {}},
		{name: "empty query path is the default", in: `{"query_path":""}`, want: func(*Config) {}},
		{name: "not JSON", in: `{"policy":`, err: "(root): not JSON"},
		{name: "not an object", in: `[]`, err: "(root): must be a JSON object"},
		{name: "duplicate key", in: `{"fail_open":true,"fail_open":false}`, err: "(root): not JSON"},
		{name: "unknown field", in: `{"failopen":true}`, err: "failopen: unknown field"},
		{name: "policy string", in: `{"policy":"default"}`, err: "policy: must be the policy JSON object"},
		{name: "max body zero", in: `{"max_body_bytes":0}`, err: "max_body_bytes: must be a positive integer"},
		{name: "max body fraction", in: `{"max_body_bytes":1.5}`, err: "max_body_bytes: must be a positive integer"},
		{name: "max body string", in: `{"max_body_bytes":"1"}`, err: "max_body_bytes: must be a positive integer"},
		{name: "on_oversize", in: `{"on_oversize":"drop"}`, err: `on_oversize: must be "reject" or "passthrough"`},
		{name: "fail_open string", in: `{"fail_open":"yes"}`, err: "fail_open: must be true or false"},
		{name: "path prefix", in: `{"path_prefix":"v1"}`, err: "path_prefix: must be a string starting with '/'"},
		{name: "empty path segment", in: `{"documents_path":"a..b"}`, err: "documents_path: empty segment"},
		{name: "documents path empty", in: `{"documents_path":""}`, err: "documents_path: must not be empty"},
		{name: "documents path is the extension", in: `{"documents_path":"ctxgate"}`, err: "documents_path:"},
		{name: "trust_keys object", in: `{"trust_keys":{}}`, err: "trust_keys: must be an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConfig([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.err)
				}
				if !strings.HasPrefix(err.Error(), "plugin configuration: ") {
					t.Errorf("error %q does not say it is about the configuration", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := *def
			want.DocumentsPath = append([]string(nil), def.DocumentsPath...)
			tt.want(&want)
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("config = %+v\nwant     %+v", *got, want)
			}
		})
	}
}

func TestLoadPolicyRefusesUnverifiedBundle(t *testing.T) {
	c, err := ParseConfig([]byte(`{"policy":{"ctxgate_bundle":1,"policy":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loadPolicy(c); err == nil || !strings.Contains(err.Error(), "signed policy bundles") {
		t.Fatalf("loadPolicy(bundle) = %v, want a refusal", err)
	}
}
