package main

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
)

// failOn is --fail-on: the verdicts of a result that make the command exit
// exitVerdict, as `opa eval --fail-defined` makes a defined result exit 1,
// so a script can branch on the gate without parsing its JSON. It is a
// comma-separated list; repeated, the lists add up. The first use replaces
// the command's default; "none" clears the list.
type failOn struct {
	choices []string // the verdicts this command can report
	set     []string // the chosen ones
	given   bool     // set on the command line (the default is replaced)
}

func newFailOn(choices []string, defaults ...string) *failOn {
	return &failOn{choices: choices, set: defaults}
}

func (f *failOn) String() string {
	if f == nil || len(f.set) == 0 {
		return "none"
	}
	return strings.Join(f.set, ",")
}

func (f *failOn) Set(s string) error {
	if !f.given {
		f.given, f.set = true, nil
	}
	if s == "none" {
		f.set = nil
		return nil
	}
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		if !slices.Contains(f.choices, v) {
			return errors.New("unknown verdict " + quote(v) + " (want " + strings.Join(f.choices, ", ") + " or none)")
		}
		if !slices.Contains(f.set, v) {
			f.set = append(f.set, v)
		}
	}
	return nil
}

// matched returns the chosen verdicts among those a result has.
func (f *failOn) matched(verdicts []string) []string {
	var out []string
	for _, v := range verdicts {
		if slices.Contains(f.set, v) {
			out = append(out, v)
		}
	}
	return out
}

// Actions are the verdicts of eval (docs/decision.md); --fail-on names
// none of them by default, so a refusal is a successful decision.
var actions = []string{"inject", "caveat", "fallback", "refuse"}

// decisionVerdicts is the decision's action.
func decisionVerdicts(out []byte) ([]string, error) {
	var d struct {
		Action string `json:"action"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return nil, errors.New("reading the decision: " + err.Error())
	}
	return []string{d.Action}, nil
}

// validationChecks are the verdicts of validate: a soft refusal, a cited tag
// the prompt never offered, a sentence without a citation. The first two
// fail validate by default: the answer is a refusal or cites evidence that
// does not exist. An uncited sentence is often a harmless transition, so it
// fails only when asked for.
var validationChecks = []string{"soft_refusal", "unknown", "uncited_sentences"}

// validation is the validate output (docs/decision.md, Answer validation).
type validation struct {
	SoftRefusal bool     `json:"soft_refusal"`
	Cited       []string `json:"cited"`
	Unknown     []string `json:"unknown"`
	Uncited     []string `json:"uncited_sentences"`
	GapEvent    *struct {
		Kind string `json:"kind"`
	} `json:"gap_event"`
}

func parseValidation(out []byte) (*validation, error) {
	var v validation
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, errors.New("reading the validation: " + err.Error())
	}
	return &v, nil
}

// validationVerdicts are the checks the answer fails.
func validationVerdicts(out []byte) ([]string, error) {
	v, err := parseValidation(out)
	if err != nil {
		return nil, err
	}
	var failed []string
	if v.SoftRefusal {
		failed = append(failed, "soft_refusal")
	}
	if len(v.Unknown) > 0 {
		failed = append(failed, "unknown")
	}
	if len(v.Uncited) > 0 {
		failed = append(failed, "uncited_sentences")
	}
	return failed, nil
}
