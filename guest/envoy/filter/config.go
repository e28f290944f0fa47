package filter

import (
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/bundle"
	"github.com/ctxgate/ctxgate/gate/chat"
	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/gate/wire"
)

// Config is the plugin configuration (Envoy's
// typed_config.config.configuration, an Istio WasmPlugin's pluginConfig).
// It is validated once, when the plugin starts; a bad configuration stops the
// plugin from starting with one log line naming the field, so a mistake shows
// up at deploy time and not as a stream of failed requests.
type Config struct {
	// Policy is the policy document, or nil for the built-in default. It is
	// a plain policy or a signed bundle (docs/signing.md).
	Policy []byte
	// PolicyExact is set when the policy came as a JSON string: its bytes
	// are exactly what the operator wrote, so a bundle is checked byte for
	// byte; an object has been through Envoy's config (YAML, protobuf
	// Struct) and is re-encoded here.
	PolicyExact bool
	// TrustKeys are the raw trust_keys JSON value: the public keys a signed
	// bundle must verify against.
	TrustKeys []byte
	// SignatureMode is the bundle mode: "hybrid" (default), "ed25519" or
	// "ml-dsa-65".
	SignatureMode string
	// PathPrefix selects the requests the filter gates (POST only).
	PathPrefix string
	// DocumentsPath is the member path of the retrieved documents array.
	DocumentsPath []string
	// QueryPath is the member path of the question string; empty means the
	// content of the last "user" message in "messages".
	QueryPath []string
	// MaxBodyBytes bounds the buffered request (and checked response) body.
	MaxBodyBytes int
	// RejectOversize answers 413 to a body over MaxBodyBytes; otherwise the
	// request passes through ungated.
	RejectOversize bool
	// FailOpen passes a request the gate cannot decide through untouched;
	// otherwise the client gets the error JSON with a 4xx/5xx status.
	FailOpen bool
	// SoftRefusalCheck runs the answer check on non-streaming JSON responses.
	SoftRefusalCheck bool
	// VectorMetric and RerankScale are the score conventions of every gate
	// request that states none (docs/decision.md); empty: the gate's own.
	VectorMetric gate.VectorMetric
	RerankScale  gate.RerankScale
}

// Defaults.
const (
	DefaultPathPrefix   = "/v1/chat/completions"
	DefaultMaxBodyBytes = 1 << 20
	// ExtensionField is the member that may carry retrieval results in the
	// gate's own request shape (package gate/chat reads it).
	ExtensionField = chat.ExtensionField
)

// configError names the configuration field at fault.
type configError struct{ field, msg string }

func (e *configError) Error() string { return "plugin configuration: " + e.field + ": " + e.msg }

// ParseConfig validates the plugin configuration. An empty configuration
// selects every default.
func ParseConfig(data []byte) (*Config, error) {
	c := &Config{
		PathPrefix:       DefaultPathPrefix,
		DocumentsPath:    []string{"documents"},
		MaxBodyBytes:     DefaultMaxBodyBytes,
		RejectOversize:   true,
		SoftRefusalCheck: true,
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return c, nil
	}
	root, err := jsonx.Parse(data, maxConfigDepth)
	if err != nil {
		return nil, &configError{"(root)", "not JSON: " + err.Error()}
	}
	if root.Kind() != jsonx.Object {
		return nil, &configError{"(root)", "must be a JSON object"}
	}
	for i := 0; i < root.Len(); i++ {
		if err := c.set(root.Key(i), root.Member(i)); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// maxConfigDepth leaves room for a policy document inside the configuration.
const maxConfigDepth = 64

func (c *Config) set(key string, v *jsonx.Value) error {
	switch key {
	case "policy":
		switch v.Kind() {
		case jsonx.Object:
			c.Policy, c.PolicyExact = jsonx.AppendValue(nil, v), false
		case jsonx.String:
			c.Policy, c.PolicyExact = []byte(v.Str()), true
		case jsonx.Null:
			c.Policy = nil
		default:
			return &configError{key, "must be the policy (or signed bundle) as a JSON object or a string holding it"}
		}
	case "trust_keys":
		if k := v.Kind(); k != jsonx.Array && k != jsonx.Object {
			return &configError{key, `must be public keys: {"keys": [...]}, an array of keys, or one key`}
		}
		c.TrustKeys = jsonx.AppendValue(nil, v)
	case "signature_mode":
		if _, err := bundle.ParseMode(v.Str()); v.Kind() != jsonx.String || err != nil {
			return &configError{key, `must be "hybrid", "ed25519" or "ml-dsa-65"`}
		}
		c.SignatureMode = v.Str()
	case "path_prefix":
		if v.Kind() != jsonx.String || !strings.HasPrefix(v.Str(), "/") {
			return &configError{key, "must be a string starting with '/'"}
		}
		c.PathPrefix = v.Str()
	case "documents_path", "query_path":
		p, err := pathField(key, v)
		if err != nil {
			return err
		}
		if key == "documents_path" {
			c.DocumentsPath = p
		} else {
			c.QueryPath = p
		}
	case "max_body_bytes":
		n, err := strconv.Atoi(v.Raw())
		if v.Kind() != jsonx.Number || err != nil || n <= 0 {
			return &configError{key, "must be a positive integer"}
		}
		c.MaxBodyBytes = n
	case "on_oversize":
		switch v.Str() {
		case "reject":
			c.RejectOversize = true
		case "passthrough":
			c.RejectOversize = false
		default:
			return &configError{key, `must be "reject" or "passthrough"`}
		}
	case "vector_metric":
		m, ok := wire.ParseVectorMetric(v.Str())
		if v.Kind() != jsonx.String || !ok {
			return &configError{key, `must be "cosine", "dot", "l2", "l2_squared", "cosine_distance" or "negative_dot"`}
		}
		c.VectorMetric = m
	case "rerank_scale":
		r, ok := wire.ParseRerankScale(v.Str())
		if v.Kind() != jsonx.String || !ok {
			return &configError{key, `must be "probability" or "logit"`}
		}
		c.RerankScale = r
	case "fail_open":
		return boolField(key, v, &c.FailOpen)
	case "soft_refusal_check":
		return boolField(key, v, &c.SoftRefusalCheck)
	default:
		return &configError{key, "unknown field"}
	}
	return nil
}

func boolField(key string, v *jsonx.Value, dst *bool) error {
	if v.Kind() != jsonx.Bool {
		return &configError{key, "must be true or false"}
	}
	*dst = v.Bool()
	return nil
}

// pathField accepts a dotted member path ("extra.documents"). An empty
// query_path means the default (the last user message).
func pathField(key string, v *jsonx.Value) ([]string, error) {
	if v.Kind() != jsonx.String {
		return nil, &configError{key, "must be a dotted member path string"}
	}
	s := v.Str()
	if s == "" {
		if key == "query_path" {
			return nil, nil
		}
		return nil, &configError{key, "must not be empty"}
	}
	parts := strings.Split(s, ".")
	for _, p := range parts {
		if p == "" {
			return nil, &configError{key, "empty segment in path " + strconv.Quote(s)}
		}
	}
	if key == "documents_path" && len(parts) == 1 && parts[0] == ExtensionField {
		return nil, &configError{key, `"ctxgate" is the extension field, which is always read`}
	}
	return parts, nil
}
