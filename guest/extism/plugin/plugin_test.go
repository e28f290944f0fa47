package plugin

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/internal/abi"
	"github.com/ctxgate/ctxgate/policies"
)

// TestErrorJSON: the guest's error bytes are the core's encoder's, for a
// gate error and for a wrapped one (hosts and guests must agree byte for byte).
func TestErrorJSON(t *testing.T) {
	for _, err := range []error{
		&gate.Error{Code: gate.CodeBadField, Field: "chunks[2].scores.vector", Message: "must be a number"},
		&gate.Error{Code: gate.CodeLimit, Message: "request \"too\" large\n"},
		errors.Join(errors.New("ctx"), &gate.Error{Code: gate.CodeBadAnswer, Message: "m"}),
	} {
		got := ErrorJSON(err)
		if want := gate.AppendError(nil, err); string(got) != string(want) {
			t.Errorf("got %s, want %s", got, want)
		}
		var v struct {
			Error struct{ Code, Message, Field string }
		}
		if e := json.Unmarshal(got, &v); e != nil {
			t.Fatalf("not JSON: %s (%v)", got, e)
		}
		var ge *gate.Error
		errors.As(err, &ge)
		if v.Error.Code != ge.Code || v.Error.Message != ge.Message || v.Error.Field != ge.Field {
			t.Errorf("read back %+v, want %+v", v.Error, *ge)
		}
	}
}

// TestEngineBuiltOnce: the config is read once per instance, and the
// outcome (engine or policy error) is reused by every later call.
func TestEngineBuiltOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy string
		has    bool
	}{
		{"default", "", false},
		{"broken", `{"name":`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookups := map[string]int{}
			p := New(func(k string) (string, bool) {
				lookups[k]++
				if k == abi.ConfigPolicy {
					return tc.policy, tc.has
				}
				return "", false
			})
			e1, err1 := p.Engine()
			for i := 0; i < 3; i++ {
				p.Evaluate([]byte(`{}`))
				p.Validate([]byte(`{}`))
				p.Describe()
			}
			e2, err2 := p.Engine()
			for k, n := range lookups {
				if n != 1 || (k != abi.ConfigPolicy && k != abi.ConfigTrustKeys && k != abi.ConfigTrustMode &&
					k != abi.ConfigVectorMetric && k != abi.ConfigRerankScale) {
					t.Errorf("config key %q read %d times, want known keys once", k, n)
				}
			}
			if e1 != e2 || err1 != err2 {
				t.Errorf("engine rebuilt: (%p, %v) then (%p, %v)", e1, err1, e2, err2)
			}
			if (e1 == nil) == (err1 == nil) {
				t.Errorf("want exactly one of engine and error, got (%p, %v)", e1, err1)
			}
		})
	}
}

// TestBadPolicyEveryExport: a broken policy is bad_policy from all exports.
func TestBadPolicyEveryExport(t *testing.T) {
	p := New(func(string) (string, bool) { return `{"name":`, true })
	for name, f := range map[string]func() ([]byte, []byte){
		"evaluate": func() ([]byte, []byte) { return p.Evaluate([]byte(`{"query":"q","chunks":[]}`)) },
		"validate": func() ([]byte, []byte) { return p.Validate([]byte(`{"answer":"a","tags":[]}`)) },
		"describe": p.Describe,
	} {
		out, errJSON := f()
		if out != nil {
			t.Errorf("%s: output %s with a broken policy", name, out)
		}
		var v struct{ Error struct{ Code string } }
		if err := json.Unmarshal(errJSON, &v); err != nil || v.Error.Code != gate.CodeBadPolicy {
			t.Errorf("%s: want bad_policy error JSON, got %s (%v)", name, errJSON, err)
		}
	}
}

// TestNoConfigLookup: a nil lookup (a host with no config) means the default.
func TestNoConfigLookup(t *testing.T) {
	a, errA := New(nil).Describe()
	b, errB := New(func(string) (string, bool) { return "", false }).Describe()
	if string(a) != string(b) || string(errA) != string(errB) {
		t.Errorf("nil lookup differs from absent policy: (%s|%s) vs (%s|%s)", a, errA, b, errB)
	}
}

// TestScoreDefaults: the vector_metric and rerank_scale config keys are the
// conventions of every request that states none; a request's own win, and
// a bad value fails every call with the error naming the key.
func TestScoreDefaults(t *testing.T) {
	config := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	distances := []byte(`{"query":"q","chunks":[{"text":"a","scores":{"vector":1.2}},{"text":"b","scores":{"vector":1.5}}]}`)
	if _, errJSON := New(config()).Evaluate(distances); errJSON == nil {
		t.Fatal("l2 distances above 1 decided as cosines")
	}
	p := New(config(abi.ConfigVectorMetric, "l2", abi.ConfigRerankScale, "logit"))
	if out, errJSON := p.Evaluate(distances); errJSON != nil {
		t.Fatalf("default l2: %s", errJSON)
	} else if e, _ := p.Engine(); e.Defaults() != (gate.Defaults{VectorMetric: gate.MetricL2, RerankScale: gate.RerankLogit}) || len(out) == 0 {
		t.Errorf("defaults %+v", e.Defaults())
	}
	if _, errJSON := p.Evaluate([]byte(`{"query":"q","vector_metric":"cosine","chunks":[{"scores":{"vector":1.2}}]}`)); errJSON == nil {
		t.Error("the request's vector_metric does not win over the config's")
	}
	for _, c := range []struct {
		name string
		kv   []string
		want string
	}{
		{"unknown metric", []string{abi.ConfigVectorMetric, "ip"}, `"field":"vector_metric"`},
		{"unknown scale", []string{abi.ConfigRerankScale, "odds"}, `"field":"rerank_scale"`},
		{"no levels for the policy", []string{abi.ConfigPolicy, wikigr(t), abi.ConfigVectorMetric, "dot"}, `decides confidence by max_similarity`},
	} {
		p := New(config(c.kv...))
		for _, errJSON := range [][]byte{second(p.Evaluate(distances)), second(p.Describe())} {
			if !strings.Contains(string(errJSON), c.want) || !strings.Contains(string(errJSON), `"code":"bad_field"`) {
				t.Errorf("%s: %s, want %s", c.name, errJSON, c.want)
			}
		}
	}
}

func second(_, b []byte) []byte { return b }

func wikigr(t *testing.T) string {
	b, ok := policies.Get("wikigr")
	if !ok {
		t.Fatal("no wikigr preset")
	}
	return string(b)
}
