// Package testgolden reads the golden cases every host's tests run (the
// contract in docs/architecture.md): testdata/requests/<policy>/<case>.json
// is decided by policies/<policy>.json and must give exactly
// testdata/decisions/<policy>/<case>.json. `go test ./gate -run TestGolden
// -update` writes the decisions; every other test only reads them.
package testgolden

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Case is one golden request and its decision.
type Case struct {
	Policy string // the preset that decides it: its directory's name
	Name   string // the file name without .json
	// Request and Decision are the files' bytes; Decision is nil when the
	// decision file does not exist (yet).
	Request, Decision         []byte
	RequestPath, DecisionPath string
}

// Load reads every case below root (a testdata directory), sorted by policy
// and then by name, so every test visits them in one order.
func Load(root string) ([]Case, error) {
	paths, err := filepath.Glob(filepath.Join(root, "requests", "*", "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	out := make([]Case, 0, len(paths))
	for _, p := range paths {
		c := Case{
			Policy:      filepath.Base(filepath.Dir(p)),
			Name:        strings.TrimSuffix(filepath.Base(p), ".json"),
			RequestPath: p,
		}
		c.DecisionPath = filepath.Join(root, "decisions", c.Policy, c.Name+".json")
		if c.Request, err = os.ReadFile(p); err != nil {
			return nil, err
		}
		if c.Decision, err = os.ReadFile(c.DecisionPath); err != nil {
			if !os.IsNotExist(err) {
				return nil, err
			}
			c.Decision = nil
		}
		out = append(out, c)
	}
	return out, nil
}

// IsError reports whether the golden file is the error JSON: a request the
// gate must refuse, with exactly these bytes, in every host.
func (c *Case) IsError() bool { return strings.HasPrefix(string(c.Decision), `{"error":`) }

// Policies returns the policies of cases in order of first appearance
// (Load's order: sorted).
func Policies(cases []Case) []string {
	var out []string
	for i, c := range cases {
		if i == 0 || c.Policy != cases[i-1].Policy {
			out = append(out, c.Policy)
		}
	}
	return out
}

// Of returns the cases of one policy.
func Of(cases []Case, policy string) []Case {
	var out []Case
	for _, c := range cases {
		if c.Policy == policy {
			out = append(out, c)
		}
	}
	return out
}
