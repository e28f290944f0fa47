package abitest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/policies"
)

// oracle is the core's own decision for a request body, computed natively
// and independently of the filter's splicing: the expectation every host's
// run of the filter must meet byte for byte.
type oracle struct {
	Action, Level, Band string
	Confidence          json.Number
	Prompt              *struct{ Instructions, Sources, Minimal string }
	Caveat              string
	Refusal             *struct{ Type, Message string }
	Chunks              []struct{ Tag string }
	Policy              struct{ Name, Version string }
	engine              *gate.Engine
}

// decide runs the core on {"query": question, "chunks": documents} taken
// from a chat body with encoding/json (fine in tests, never in the guest).
func decide(t *testing.T, policy string, body []byte) *oracle {
	t.Helper()
	var chat struct {
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
		Documents json.RawMessage
		Ctxgate   *struct{ Chunks json.RawMessage }
	}
	if err := json.Unmarshal(body, &chat); err != nil {
		t.Fatal(err)
	}
	query := ""
	for _, m := range chat.Messages {
		if m.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			query = s
			continue
		}
		var parts []struct{ Type, Text string }
		if json.Unmarshal(m.Content, &parts) == nil {
			for _, p := range parts {
				if p.Type == "text" {
					query = p.Text
					break
				}
			}
		}
	}
	chunks := chat.Documents
	if chat.Ctxgate != nil {
		chunks = chat.Ctxgate.Chunks
	}
	req, err := json.Marshal(map[string]any{"query": query, "chunks": chunks})
	if err != nil {
		t.Fatal(err)
	}
	e := engineFor(t, policy)
	out, err := e.Evaluate(req)
	if err != nil {
		t.Fatalf("core rejects the oracle request: %v", err)
	}
	o := &oracle{engine: e}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(o); err != nil {
		t.Fatal(err)
	}
	return o
}

// testPolicy names testdata/policy.json: the tests' own policy, so tuning
// the shipped default cannot move their cases between actions.
const testPolicy = "envoy-test"

// policyJSON returns testdata/policy.json for testPolicy, else the preset.
func policyJSON(t testing.TB, name string) []byte {
	t.Helper()
	if name == testPolicy {
		b, err := os.ReadFile(filepath.Join("testdata", "policy.json"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	p, ok := policies.Get(name)
	if !ok {
		t.Fatalf("no preset policy %q", name)
	}
	return p
}

func engineFor(t testing.TB, policy string) *gate.Engine {
	t.Helper()
	e, err := gate.NewEngine(policyJSON(t, policy))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (o *oracle) tags() []string {
	var out []string
	for _, c := range o.Chunks {
		if c.Tag != "" {
			out = append(out, c.Tag)
		}
	}
	return out
}

func (o *oracle) confidenceBP() uint64 {
	f, _ := strconv.ParseFloat(string(o.Confidence), 64)
	return uint64(f*10000 + 0.5)
}

// systemText is what the filter must put in the system message.
func (o *oracle) systemText() string {
	s := o.Prompt.Instructions + "\n\n" + o.Prompt.Sources
	if o.Action == "caveat" && o.Caveat != "" {
		s += "\n\n" + o.Caveat
	}
	return s
}

func (o *oracle) headers() []string {
	return []string{
		"x-ctxgate-action: " + o.Action,
		"x-ctxgate-confidence: " + string(o.Confidence),
		"x-ctxgate-level: " + o.Level,
		"x-ctxgate-policy: " + o.Policy.Name + "@" + o.Policy.Version,
	}
}

// policyConfig is a plugin configuration carrying a preset policy.
func policyConfig(t testing.TB, policy string, extra string) []byte {
	t.Helper()
	cfg := `{"policy":` + string(policyJSON(t, policy))
	if extra != "" {
		cfg += "," + extra
	}
	return []byte(cfg + "}")
}

// body reads a sample request from examples/envoy/bodies, so the examples
// the docs point at are the ones under test.
func body(t testing.TB, name string) []byte {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "examples", "envoy", "bodies", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
