package filter

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/gate/jsonx"
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
			"on_oversize":"passthrough","fail_open":true,"soft_refusal_check":false,"trust_keys":["k"],
			"signature_mode":"ed25519","vector_metric":"l2_squared","rerank_scale":"logit"}`,
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
				c.SignatureMode = "ed25519"
				c.VectorMetric, c.RerankScale = "l2_squared", "logit"
			}},
		{name: "policy as a string keeps its bytes", in: `{"policy":"{\"name\": \"p\"}"}`,
			want: func(c *Config) { c.Policy, c.PolicyExact = []byte(`{"name": "p"}`), true }},
		{name: "null policy is the default", in: `{"policy":null}`, want: func(*Config) {}},
		{name: "empty query path is the default", in: `{"query_path":""}`, want: func(*Config) {}},
		{name: "not JSON", in: `{"policy":`, err: "(root): not JSON"},
		{name: "not an object", in: `[]`, err: "(root): must be a JSON object"},
		{name: "duplicate key", in: `{"fail_open":true,"fail_open":false}`, err: "(root): not JSON"},
		{name: "unknown field", in: `{"failopen":true}`, err: "failopen: unknown field"},
		{name: "policy number", in: `{"policy":5}`, err: "policy: must be the policy (or signed bundle)"},
		{name: "signature mode", in: `{"signature_mode":"rsa"}`, err: "signature_mode: must be"},
		{name: "max body zero", in: `{"max_body_bytes":0}`, err: "max_body_bytes: must be a positive integer"},
		{name: "max body fraction", in: `{"max_body_bytes":1.5}`, err: "max_body_bytes: must be a positive integer"},
		{name: "max body string", in: `{"max_body_bytes":"1"}`, err: "max_body_bytes: must be a positive integer"},
		{name: "on_oversize", in: `{"on_oversize":"drop"}`, err: `on_oversize: must be "reject" or "passthrough"`},
		{name: "fail_open string", in: `{"fail_open":"yes"}`, err: "fail_open: must be true or false"},
		{name: "path prefix", in: `{"path_prefix":"v1"}`, err: "path_prefix: must be a string starting with '/'"},
		{name: "empty path segment", in: `{"documents_path":"a..b"}`, err: "documents_path: empty segment"},
		{name: "documents path empty", in: `{"documents_path":""}`, err: "documents_path: must not be empty"},
		{name: "documents path is the extension", in: `{"documents_path":"ctxgate"}`, err: "documents_path:"},
		{name: "trust_keys string", in: `{"trust_keys":"k"}`, err: "trust_keys: must be public keys"},
		{name: "vector_metric unknown", in: `{"vector_metric":"ip"}`, err: `vector_metric: must be "cosine", "dot", "l2", "l2_squared", "cosine_distance" or "negative_dot"`},
		{name: "vector_metric not a string", in: `{"vector_metric":1}`, err: `vector_metric: must be`},
		{name: "rerank_scale unknown", in: `{"rerank_scale":"raw"}`, err: `rerank_scale: must be "probability" or "logit"`},
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

// TestLoadPolicyBundles uses gate/bundle's fixed test vector: a hybrid
// (Ed25519 + ML-DSA-65) bundle and the keys that signed it.
func TestLoadPolicyBundles(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "gate", "bundle", "testdata", "vector")
	b, err := os.ReadFile(filepath.Join(dir, "bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	trust, err := os.ReadFile(filepath.Join(dir, "trust.pub"))
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := bundle.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	quoted := string(jsonx.AppendString(nil, string(b)))
	tampered := strings.Replace(string(b), `"name":"vector"`, `"name":"vectoR"`, 1)
	tests := []struct {
		name, config string
		err          string // "" means the bundle opens to its signed policy
	}{
		{"bundle as a string", `{"policy":` + quoted + `,"trust_keys":` + string(trust) + `}`, ""},
		{"bundle as an object", `{"policy":` + string(b) + `,"trust_keys":` + string(trust) + `}`, ""},
		{"ed25519 only", `{"policy":` + quoted + `,"trust_keys":` + string(trust) + `,"signature_mode":"ed25519"}`, ""},
		{"no trust keys", `{"policy":` + quoted + `}`, "trust_keys"},
		{"tampered", `{"policy":` + tampered + `,"trust_keys":` + string(trust) + `}`, "signature"},
		{"plain policy with trust keys", `{"policy":{"name":"p"},"trust_keys":` + string(trust) + `}`, "must be a signed bundle"},
		{"trust keys without a policy", `{"trust_keys":` + string(trust) + `}`, "no signed policy bundle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tt.config))
			if err != nil {
				t.Fatal(err)
			}
			got, err := loadPolicy(c)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("loadPolicy = %v, want an error containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(parsed.Policy) {
				t.Errorf("opened policy %s, want the signed canonical bytes %s", got, parsed.Policy)
			}
		})
	}
}
