package host

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/internal/testenv"
	"github.com/ctxgate/ctxgate/internal/testgolden"
)

// goldenCase is one testdata/requests/<policy>/<case>.json with its expected
// decision.
type goldenCase struct {
	policy, name      string
	request, decision []byte
}

// goldenCases reads every golden request and decision (internal/testgolden),
// grouped by policy in a fixed order.
func goldenCases(t *testing.T) (map[string][]goldenCase, []string) {
	t.Helper()
	cases, err := testgolden.Load(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	byPolicy := map[string][]goldenCase{}
	for _, c := range cases {
		if c.Decision == nil {
			t.Fatalf("%s/%s has no golden decision (go test ./gate -run TestGolden -update)", c.Policy, c.Name)
		}
		byPolicy[c.Policy] = append(byPolicy[c.Policy], goldenCase{c.Policy, c.Name, c.Request, c.Decision})
	}
	return byPolicy, testgolden.Policies(cases)
}

// Every golden request gives byte-identical decisions natively, through the
// TinyGo module and through the standard-Go module, and those bytes are the
// golden decision.
func TestParity(t *testing.T) {
	byPolicy, policies := goldenCases(t)
	if len(policies) == 0 {
		testenv.Missing(t, "no golden cases in testdata/requests/<policy>/*.json")
	}
	ctx := context.Background()
	total := 0
	for _, policy := range policies {
		policyJSON, err := os.ReadFile(filepath.Join("..", "policies", policy+".json"))
		if err != nil {
			t.Fatalf("policy for testdata/requests/%s: %v", policy, err)
		}
		native, err := NewNative(policyJSON)
		if err != nil {
			t.Fatalf("native, policy %s: %v", policy, err)
		}
		evaluators := map[string]Evaluator{"native": native}
		names := []string{"native"}
		for _, m := range realModules {
			evaluators[m.String()] = newRealGate(t, m, Options{Policy: policyJSON, PoolSize: 1})
			names = append(names, m.String())
		}
		for _, c := range byPolicy[policy] {
			for _, name := range names {
				got, err := evaluators[name].Evaluate(ctx, c.request)
				// The golden decision file may end with a newline for
				// editors; the decision itself never does.
				want := bytes.TrimSuffix(c.decision, []byte("\n"))
				// A golden error: the same error JSON.
				var ge *GateError
				if errors.As(err, &ge) && bytes.HasPrefix(want, []byte(`{"error":`)) {
					got, err = ge.JSON, nil
				}
				if err != nil {
					t.Errorf("%s/%s, %s: %v", policy, c.name, name, err)
				} else if !bytes.Equal(got, want) {
					t.Errorf("%s/%s, %s: decision differs from the golden file\ngot  %s\nwant %s", policy, c.name, name, got, want)
				}
			}
			total++
		}
	}
	t.Logf("%d golden cases over %d policies, identical natively and in %d modules", total, len(policies), len(realModules))
}

// Bad bodies get the same clear *GateError natively and in every module, and
// the gate keeps working afterwards.
func TestParityBadInput(t *testing.T) {
	cases := []struct {
		name  string
		body  []byte
		code  string
		field string // "" when any field (or none) is fine
	}{
		{"malformed", []byte(`{"query":"q","chunks":[`), "bad_json", ""},
		{"not an object", []byte(`[1,2,3]`), "bad_json", ""},
		{"wrong type", []byte(`{"query":42,"chunks":[]}`), "bad_field", "query"},
		{"wrong nested type", []byte(`{"query":"q","chunks":[{"id":"a","text":"t","scores":{"vector":"high"}}]}`), "bad_field", "chunks[0].scores.vector"},
		{"empty body", nil, "bad_json", ""},
		{"huge body", bigRequest(1, 300_000), "limit", ""}, // over the core's 4 MiB, under the host's 8 MiB
		{"deep nesting", []byte(strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)), "", ""},
		{"invalid utf-8", []byte("{\"query\":\"\xff\xfe\",\"chunks\":[]}"), "", ""},
	}
	ctx := context.Background()
	native, err := NewNative(nil)
	if err != nil {
		t.Fatal(err)
	}
	evaluators := map[string]Evaluator{"native": native}
	names := []string{"native"}
	for _, m := range realModules {
		evaluators[m.String()] = newRealGate(t, m, Options{PoolSize: 1, Timeout: 10e9})
		names = append(names, m.String())
	}
	want, err := native.Evaluate(ctx, []byte(sampleRequest))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		var first *GateError
		for _, name := range names {
			_, err := evaluators[name].Evaluate(ctx, tc.body)
			var ge *GateError
			if !errors.As(err, &ge) {
				t.Errorf("%s, %s: %v, want a *GateError", tc.name, name, err)
				continue
			}
			if (tc.code != "" && ge.Code != tc.code) || (tc.field != "" && ge.Field != tc.field) || ge.Message == "" {
				t.Errorf("%s, %s: %+v, want code %q field %q", tc.name, name, ge, tc.code, tc.field)
			}
			if first == nil {
				first = ge
			} else if ge.Code != first.Code || ge.Field != first.Field || ge.Message != first.Message || !bytes.Equal(ge.JSON, first.JSON) {
				t.Errorf("%s: %s says %s, native says %s", tc.name, name, ge.JSON, first.JSON)
			}
			// The host keeps working, with the same instance.
			if got, err := evaluators[name].Evaluate(ctx, []byte(sampleRequest)); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s, %s: the next call failed: %v", tc.name, name, err)
			}
		}
	}
	for _, m := range realModules {
		if s := evaluators[m.String()].(*Gate).Stats(); s.Discarded != 0 || s.Created != 1 {
			t.Errorf("%s: bad input replaced an instance: %+v", m, s)
		}
	}
}
