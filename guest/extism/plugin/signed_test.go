package plugin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/guest/extism/internal/cases"
)

func TestSignedPolicy(t *testing.T) {
	for _, tc := range cases.Signed(t) {
		t.Run(tc.Name, func(t *testing.T) {
			p := New(func(k string) (string, bool) { v, ok := tc.Config[k]; return v, ok })
			out, errJSON := p.Describe()
			if tc.Field == "" {
				if errJSON != nil {
					t.Fatalf("want a loaded engine, got %s", errJSON)
				}
				var d struct{ Policy struct{ Name string } }
				if err := json.Unmarshal(out, &d); err != nil || d.Policy.Name == "" {
					t.Errorf("describe: %s (%v)", out, err)
				}
				if tc.Policy != "" && d.Policy.Name != tc.Policy {
					t.Errorf("loaded policy %q, want %q", d.Policy.Name, tc.Policy)
				}
				return
			}
			var v struct{ Error struct{ Code, Field string } }
			if err := json.Unmarshal(errJSON, &v); err != nil {
				t.Fatalf("want error JSON, got %s / %s", out, errJSON)
			}
			if v.Error.Code != gate.CodeBadPolicy || !strings.HasPrefix(v.Error.Field, tc.Field) {
				t.Errorf("got %s, want bad_policy at %s", errJSON, tc.Field)
			}
		})
	}
}
