package calibrate

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// copies are ways of repeating an example set ten times that add no
// evidence: the set after itself, each example ten times in a row in a
// group of its own making, and each copy under new group names.
func copies(exs []Example) map[string][]Example {
	out := map[string][]Example{}
	for c := 0; c < 10; c++ {
		out["the set ten times"] = append(out["the set ten times"], exs...)
		for i := range exs {
			ex := exs[i]
			if ex.Group != "" {
				ex.Group += "/copy" + strconv.Itoa(c)
			}
			out["each copy its own groups"] = append(out["each copy its own groups"], ex)
		}
	}
	for i := range exs {
		for c := 0; c < 10; c++ {
			ex := exs[i]
			if ex.Group == "" {
				ex.Group = "repeats of " + strconv.Itoa(i)
			}
			out["repeats inside one group"] = append(out["repeats inside one group"], ex)
		}
	}
	return out
}

// Ten copies of an example set certify exactly what one copy does: the
// same policy bytes and the same bound, or the same refusal. Repeats are
// not evidence, however they are grouped.
func TestCopiesCertifyWhatOneCopyDoes(t *testing.T) {
	w := newWorld(7, 1.5, 6, -5)
	single := w.examples(300)
	paired := w.examples(300)
	for i := range paired {
		paired[i].Group = "q" + strconv.Itoa(i/2)
	}
	for _, c := range []struct {
		name string
		exs  []Example
		o    Options
	}{
		{"a guarantee, single examples", single, Options{Target: Hallucination, Alpha: 0.15, Version: "1"}},
		{"a guarantee, paired examples", paired, Options{Target: Error, Alpha: 0.15, Version: "1"}},
		// One copy is too few for this bound: ten copies are too.
		{"no guarantee", single[:20], Options{Target: Hallucination, Alpha: 0.1, Version: "1"}},
	} {
		one, oneErr := Calibrate(c.exs, c.o)
		if c.name == "no guarantee" {
			if !errors.Is(oneErr, ErrNoGuarantee) {
				t.Fatalf("%s: one copy gave %v, want no guarantee", c.name, oneErr)
			}
		} else if oneErr != nil {
			t.Fatalf("%s: one copy: %v", c.name, oneErr)
		}
		for how, exs := range copies(c.exs) {
			ten, err := Calibrate(exs, c.o)
			if oneErr != nil {
				if err == nil || err.Error() != oneErr.Error() {
					t.Errorf("%s, %s: got %v, want %v", c.name, how, err, oneErr)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s, %s: %v", c.name, how, err)
				continue
			}
			if string(ten.Policy) != string(one.Policy) {
				t.Errorf("%s, %s: the policies differ", c.name, how)
			}
			if !reflect.DeepEqual(ten.Report.Bound, one.Report.Bound) {
				t.Errorf("%s, %s: bound %+v, want %+v", c.name, how, ten.Report.Bound, one.Report.Bound)
			}
			if g, e := ten.Report.Examples, one.Report.Examples; g.Groups != e.Groups || g.Examples != 10*e.Examples || g.Duplicates != 9*e.Examples {
				t.Errorf("%s, %s: counts %+v, want %d independent of %d examples (%d duplicates)", c.name, how, g, e.Groups, 10*e.Examples, 9*e.Examples)
			}
		}
	}
}

// The binomial test counts independent examples: examples sharing a
// group count once, and a group is on the wrong side when any of its
// examples of the bound's label is.
func TestBoundCountsGroups(t *testing.T) {
	w := newWorld(8, 1.5, 6, -5)
	exs := w.examples(400)
	for i := range exs {
		exs[i].Group = "q" + strconv.Itoa(i/4) // 100 questions, four retrievals each
	}
	res, err := Calibrate(exs, Options{Target: Hallucination, Alpha: 0.3, Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	bd := res.Report.Bound
	if res.Report.Examples.Groups != 100 || bd.N > 100 || bd.Examples <= bd.N {
		t.Errorf("%d independent examples, bound on n = %d of %d examples: want n at most the 100 groups, fewer than the examples",
			res.Report.Examples.Groups, bd.N, bd.Examples)
	}
	if !strings.Contains(bd.Statement, " of "+strconv.Itoa(bd.N)+" independent calibration examples labeled 0") {
		t.Errorf("statement %q does not say the test counted independent examples", bd.Statement)
	}
}

// Identical requests are one piece of evidence whatever their groups say,
// so groups joined by a shared request split together.
func TestIndependentGroups(t *testing.T) {
	w := newWorld(9, 1, 4, -2.8)
	a, b, c := w.request(), w.request(), w.request()
	exs := []Example{
		{Request: a, Label: true, Group: "x"},
		{Request: b, Label: false, Group: "y"},
		{Request: a, Label: true, Group: "y"},  // a duplicate: joins x and y
		{Request: a, Label: false},             // the same request, the other label: kept, in x's group
		{Request: c, Label: false},             // alone
		{Request: c, Label: false, Group: "z"}, // a duplicate
	}
	ev, err := independent(exs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.exs) != 4 || ev.duplicates != 2 || ev.groups != 2 {
		t.Fatalf("kept %d, %d duplicates, %d groups; want 4, 2, 2", len(ev.exs), ev.duplicates, ev.groups)
	}
	if k := ev.keys; k[0] != k[1] || k[0] != k[2] || k[3] == k[0] {
		t.Errorf("group keys %q: want the first three together, the last apart", k)
	}
	// Keys depend on the requests, not on names or positions.
	ev2, _ := independent([]Example{exs[4], exs[0], {Request: b, Label: false, Group: "renamed"}, {Request: a, Label: true, Group: "renamed"}})
	if ev2.keys[0] != ev.keys[3] || ev2.keys[1] != ev.keys[0] {
		t.Errorf("keys %q after renaming and reordering, want %q", ev2.keys, ev.keys)
	}
}
