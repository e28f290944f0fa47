package plugin

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/ctxgate/ctxgate/gate"
)

func TestErrorJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"field", &gate.Error{Code: gate.CodeBadField, Field: "chunks[2].scores.vector", Message: "must be a number"},
			`{"error":{"code":"bad_field","message":"must be a number","field":"chunks[2].scores.vector"}}`},
		{"no_field", &gate.Error{Code: gate.CodeLimit, Message: "request too large"},
			`{"error":{"code":"limit","message":"request too large"}}`},
		{"escapes", &gate.Error{Code: gate.CodeBadJSON, Message: "bad \"x\" \\ \n\t\r\x00\x1f\x7f"},
			`{"error":{"code":"bad_json","message":"bad \"x\" \\ \n\t\r\u0000\u001f\u007f"}}`},
		{"utf8", &gate.Error{Code: gate.CodeBadJSON, Message: "é 😀 \xff end"},
			`{"error":{"code":"bad_json","message":"é 😀 \ufffd end"}}`},
		{"wrapped", errors.Join(errors.New("ctx"), &gate.Error{Code: gate.CodeBadAnswer, Message: "m"}),
			`{"error":{"code":"bad_answer","message":"m"}}`},
		{"plain", errors.New("boom"), `{"error":{"code":"bad_json","message":"boom"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ErrorJSON(tc.err)
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("not valid JSON: %s", got)
			}
		})
	}
}

// TestErrorJSONRoundTrip: whatever the message, a JSON decoder reads back
// the same text (with invalid UTF-8 replaced, as encoding/json does).
func TestErrorJSONRoundTrip(t *testing.T) {
	for _, msg := range []string{"", "plain", "\"\\/\b\f", "\u2028\u2029", "a\x80b", string([]byte{0xed, 0xa0, 0x80})} {
		var v struct {
			Error struct{ Message string } `json:"error"`
		}
		b := ErrorJSON(&gate.Error{Code: gate.CodeBadJSON, Message: msg})
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%q: %v in %s", msg, err, b)
		}
		want, _ := json.Marshal(msg)
		var wantS string
		_ = json.Unmarshal(want, &wantS)
		if v.Error.Message != wantS {
			t.Errorf("%q: read back %q, want %q", msg, v.Error.Message, wantS)
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
			lookups := 0
			p := New(func(k string) (string, bool) {
				lookups++
				if k != ConfigKeyPolicy {
					t.Errorf("unexpected config key %q", k)
				}
				return tc.policy, tc.has
			})
			e1, err1 := p.Engine()
			for i := 0; i < 3; i++ {
				p.Evaluate([]byte(`{}`))
				p.Validate([]byte(`{}`))
				p.Describe()
			}
			e2, err2 := p.Engine()
			if lookups != 1 {
				t.Errorf("config read %d times, want 1", lookups)
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
