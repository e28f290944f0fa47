package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/policies"
)

// The design documents' examples (their tables, worked examples and score
// tables), one manifest per document in testdata/seeds: each example names a
// golden request of the document's preset and the values the document
// states, or derives from its own formulas, for the decision. An example is
// "exact" when every value holds, or "differs by design: <reason>" when the
// values marked differs do not hold on purpose; the difference is named, and
// docs/provenance.md explains it.

// seedManifest is one design document's examples.
type seedManifest struct {
	Document string        `json:"document"`
	Preset   string        `json:"preset"`
	Examples []seedExample `json:"examples"`
}

type seedExample struct {
	Case    string `json:"case"`    // testdata/requests/<preset>/<case>.json
	Example string `json:"example"` // what the document says, where
	// PolicyOverride replaces top-level keys of the preset (a document's
	// own configuration example, such as another threshold). Such an
	// example is decided natively; its request is still a golden case of
	// the preset itself.
	PolicyOverride map[string]json.RawMessage `json:"policy_override"`
	Expect         []seedExpect               `json:"expect"`
	Status         string                     `json:"status"`     // "exact" | "differs by design: <reason>"
	Difference     string                     `json:"difference"` // the difference's name in docs/provenance.md
}

// seedExpect is one stated value. Field is a path into the decision JSON:
// dotted keys; [n] an index, [id=x] the chunk with that id, [*] every
// element; ".length" an array's length. Exactly one check applies: value
// (numbers within tolerance), contains (a substring, or for an array of
// strings, a substring of some element), min/max, present, null, or not.
type seedExpect struct {
	Field     string           `json:"field"`
	Value     *json.RawMessage `json:"value"`
	Tolerance float64          `json:"tolerance"`
	Contains  *string          `json:"contains"`
	Min       *float64         `json:"min"`
	Max       *float64         `json:"max"`
	Present   *bool            `json:"present"`
	Null      bool             `json:"null"`
	Not       *json.RawMessage `json:"not"`
	// Differs marks a value the document states and ctxgate deliberately
	// does not produce: the check must fail.
	Differs bool `json:"differs"`
}

const seedsDir = "../testdata/seeds"

func readSeedManifests(t *testing.T) map[string]*seedManifest {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(seedsDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s (%v)", seedsDir, err)
	}
	out := map[string]*seedManifest{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		m := &seedManifest{}
		if err := dec.Decode(m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = m
	}
	return out
}

// TestSeedExamples checks every documented example against its golden
// decision (which TestGolden pins to the native engine and the host parity
// tests to both modules) and reports which are exact and which differ by
// design. Run with -v for the list.
func TestSeedExamples(t *testing.T) {
	manifests := readSeedManifests(t)
	provenance, err := os.ReadFile("../docs/provenance.md")
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(manifests))
	for n := range manifests {
		names = append(names, n)
	}
	sort.Strings(names)
	exact, differs, cases := 0, 0, map[string]bool{}
	for _, name := range names {
		m := manifests[name]
		pj, ok := policies.Get(m.Preset)
		if !ok {
			t.Errorf("%s: no preset %q", name, m.Preset)
			continue
		}
		if len(m.Examples) == 0 {
			t.Errorf("%s: no examples", name)
		}
		for i, ex := range m.Examples {
			where := fmt.Sprintf("%s[%d] %s", name, i, ex.Case)
			dec, err := seedDecision(m.Preset, pj, &ex)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			cases[m.Preset+"/"+ex.Case] = true
			marked := 0
			var differences []string
			for _, x := range ex.Expect {
				err := x.check(dec)
				if x.Differs {
					marked++
					if err != nil {
						differences = append(differences, err.Error())
					}
				}
				switch {
				case x.Differs && err == nil:
					t.Errorf("%s: %s now holds as the document states it: mark it exact", where, x.Field)
				case !x.Differs && err != nil:
					t.Errorf("%s (%s): %v", where, ex.Example, err)
				}
			}
			switch {
			case len(ex.Expect) == 0:
				t.Errorf("%s: no expected values", where)
			case ex.Status == "exact" && marked == 0 && ex.Difference == "":
				exact++
				t.Logf("exact     %-28s %-44s %s", name, ex.Case, ex.Example)
			case strings.HasPrefix(ex.Status, "differs by design: ") && marked > 0 && ex.Difference != "":
				differs++
				if !bytes.Contains(provenance, []byte("`"+ex.Difference+"`")) {
					t.Errorf("%s: difference %q is not explained in docs/provenance.md", where, ex.Difference)
				}
				t.Logf("differs   %-28s %-44s %s (%s)\n          %s", name, ex.Case, strings.TrimPrefix(ex.Status, "differs by design: "),
					ex.Difference, strings.Join(differences, "\n          "))
			default:
				t.Errorf("%s: status %q does not match its %d values marked differs (difference %q)", where, ex.Status, marked, ex.Difference)
			}
		}
	}
	t.Logf("%d documented examples over %d golden cases: %d exact, %d differ by design", exact+differs, len(cases), exact, differs)
}

// seedDecision is the example's decision: the golden file of its case, or
// for a policy override, the native decision under the changed preset.
func seedDecision(preset string, policyJSON []byte, ex *seedExample) (any, error) {
	reqPath := filepath.Join(goldenRoot, "requests", preset, ex.Case+".json")
	if _, err := os.Stat(reqPath); err != nil {
		return nil, fmt.Errorf("no golden request: %v", err)
	}
	var out []byte
	if ex.PolicyOverride == nil {
		b, err := os.ReadFile(filepath.Join(goldenRoot, "decisions", preset, ex.Case+".json"))
		if err != nil {
			return nil, fmt.Errorf("no golden decision (make golden): %v", err)
		}
		out = b
	} else {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(policyJSON, &doc); err != nil {
			return nil, err
		}
		for k, v := range ex.PolicyOverride {
			doc[k] = v
		}
		pj, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		e, err := NewEngine(pj)
		if err != nil {
			return nil, fmt.Errorf("policy override: %v", err)
		}
		req, err := os.ReadFile(reqPath)
		if err != nil {
			return nil, err
		}
		if out, err = e.Evaluate(req); err != nil {
			return nil, err
		}
	}
	return decodeAny(out)
}

// decodeAny decodes JSON into maps, slices, strings, bools, nil and
// json.Number, as encoding/json with UseNumber does, but with the gate's
// own parser: TinyGo's encoding/json does not decode into interface
// values, and these tests run under TinyGo too.
func decodeAny(data []byte) (any, error) {
	v, err := jsonx.Parse(data, 64)
	if err != nil {
		return nil, err
	}
	return anyOf(&v), nil
}

func anyOf(v *jsonx.Value) any {
	switch v.Kind() {
	case jsonx.Object:
		m := make(map[string]any, v.Len())
		for i := 0; i < v.Len(); i++ {
			m[v.Key(i)] = anyOf(v.Member(i))
		}
		return m
	case jsonx.Array:
		a := make([]any, v.Len())
		for i := range a {
			a[i] = anyOf(v.Index(i))
		}
		return a
	case jsonx.String:
		return v.Str()
	case jsonx.Number:
		return json.Number(v.Raw())
	case jsonx.Bool:
		return v.Bool()
	}
	return nil
}

// resolve returns the values at path in v ([*] gives every element).
func resolve(v any, path string) ([]any, error) {
	vals := []any{v}
	for _, seg := range strings.Split(path, ".") {
		key, sel := seg, ""
		if i := strings.IndexByte(seg, '['); i >= 0 && strings.HasSuffix(seg, "]") {
			key, sel = seg[:i], seg[i+1:len(seg)-1]
		}
		var next []any
		for _, cur := range vals {
			if key == "length" && sel == "" {
				arr, ok := cur.([]any)
				if !ok {
					return nil, fmt.Errorf("%s: length of a non-array", path)
				}
				next = append(next, json.Number(strconv.Itoa(len(arr))))
				continue
			}
			obj, ok := cur.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: %q is not in an object", path, key)
			}
			x, ok := obj[key]
			if !ok {
				return nil, fmt.Errorf("%s: no key %q", path, key)
			}
			if sel == "" {
				next = append(next, x)
				continue
			}
			arr, ok := x.([]any)
			if !ok {
				return nil, fmt.Errorf("%s: %q is not an array", path, key)
			}
			switch {
			case sel == "*":
				if len(arr) == 0 {
					return nil, fmt.Errorf("%s: %q is empty", path, key)
				}
				next = append(next, arr...)
			case strings.HasPrefix(sel, "id="):
				found := false
				for _, el := range arr {
					if o, ok := el.(map[string]any); ok && o["id"] == sel[3:] {
						next, found = append(next, el), true
					}
				}
				if !found {
					return nil, fmt.Errorf("%s: no element with %s", path, sel)
				}
			default:
				n, err := strconv.Atoi(sel)
				if err != nil || n < 0 || n >= len(arr) {
					return nil, fmt.Errorf("%s: no element %s of %d", path, sel, len(arr))
				}
				next = append(next, arr[n])
			}
		}
		vals = next
	}
	return vals, nil
}

// check returns why x does not hold for the decision d, or nil.
func (x *seedExpect) check(d any) error {
	vals, err := resolve(d, x.Field)
	if x.Present != nil {
		if got := err == nil; got != *x.Present {
			return fmt.Errorf("%s: present %v, want %v", x.Field, got, *x.Present)
		}
		return nil
	}
	if err != nil {
		return err
	}
	for _, got := range vals {
		if err := x.checkOne(got); err != nil {
			return fmt.Errorf("%s: %v", x.Field, err)
		}
	}
	return nil
}

func (x *seedExpect) checkOne(got any) error {
	switch {
	case x.Null:
		if got != nil {
			return fmt.Errorf("got %v, want null", got)
		}
	case x.Value != nil:
		return sameValue(got, *x.Value, x.Tolerance)
	case x.Not != nil:
		if sameValue(got, *x.Not, x.Tolerance) == nil {
			return fmt.Errorf("got %v, want anything else", got)
		}
	case x.Contains != nil:
		switch g := got.(type) {
		case string:
			if !strings.Contains(g, *x.Contains) {
				return fmt.Errorf("%q does not contain %q", g, *x.Contains)
			}
		case []any:
			for _, el := range g {
				if s, ok := el.(string); ok && strings.Contains(s, *x.Contains) {
					return nil
				}
			}
			return fmt.Errorf("no element of %v contains %q", g, *x.Contains)
		default:
			return fmt.Errorf("got %v, want a string holding %q", got, *x.Contains)
		}
	case x.Min != nil || x.Max != nil:
		n, ok := got.(json.Number)
		f, err := n.Float64()
		if !ok || err != nil {
			return fmt.Errorf("got %v, want a number", got)
		}
		if (x.Min != nil && f < *x.Min) || (x.Max != nil && f > *x.Max) {
			return fmt.Errorf("got %v, want within [%v, %v]", f, deref(x.Min, math.Inf(-1)), deref(x.Max, math.Inf(1)))
		}
	default:
		return fmt.Errorf("no check given")
	}
	return nil
}

func deref(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

// sameValue compares a decoded decision value with a manifest value: numbers
// within tol, anything else exactly.
func sameValue(got any, raw json.RawMessage, tol float64) error {
	want, err := decodeAny(raw)
	if err != nil {
		return err
	}
	if wn, ok := want.(json.Number); ok {
		gn, ok := got.(json.Number)
		if !ok {
			return fmt.Errorf("got %v, want the number %v", got, wn)
		}
		g, _ := gn.Float64()
		w, _ := wn.Float64()
		if math.Abs(g-w) > tol+1e-12 {
			return fmt.Errorf("got %v, want %v (tolerance %v)", g, w, tol)
		}
		return nil
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("got %#v, want %#v", got, want)
	}
	return nil
}
