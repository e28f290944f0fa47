// Package gatejudge is the gaps.Judge that re-runs past queries through the
// real gate: the same policy, the same decision the users would get today.
// It is its own package so that package gaps (clustering, report) builds and
// tests without the core.
package gatejudge

import (
	"encoding/json"
	"errors"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/host/gaps"
)

// Judge decides re-run queries with an evaluate function: the native core
// (Native) or any host evaluator (New), for example the Wasm module.
type Judge struct {
	name string
	eval func(request []byte) ([]byte, error)
}

// New wraps an evaluate function that returns the decision JSON.
func New(name string, eval func(request []byte) ([]byte, error)) *Judge {
	return &Judge{name: name, eval: eval}
}

// Native runs the core in-process with the given policy (nil: the default).
func Native(policyJSON []byte) (*Judge, error) {
	e, err := gate.NewEngine(policyJSON)
	if err != nil {
		return nil, err
	}
	ref := e.Ref()
	return New("gate "+ref.Name+"@"+ref.Version+" (native)", e.Evaluate), nil
}

func (j *Judge) Name() string { return j.name }

// decision is the part of the decision JSON a verdict needs.
type decision struct {
	Action string `json:"action"`
	Chunks []struct {
		Kept  bool    `json:"kept"`
		Score float64 `json:"score"`
	} `json:"chunks"`
}

// Judge evaluates the retrieval's request. A query clears when the gate
// injects or caveats (its evidence reaches the model: for the support-agent policy,
// some chunk is over the floor); it is refused when the gate refuses. A
// fallback (the confidence gate firing) is neither. Best is the best per-chunk
// confidence the gate computed.
func (j *Judge) Judge(rt *gaps.Retrieval) (gaps.Outcome, error) {
	var o gaps.Outcome
	out, err := j.eval(rt.Request)
	if err != nil {
		var ge *gate.Error
		if errors.As(err, &ge) {
			return o, errors.New(ge.Code + ": " + ge.Error())
		}
		return o, err
	}
	var d decision
	if err := json.Unmarshal(out, &d); err != nil {
		return o, errors.New("decision is not JSON: " + err.Error())
	}
	o.Action = d.Action
	o.Cleared = d.Action == string(gate.ActionInject) || d.Action == string(gate.ActionCaveat)
	o.Refused = d.Action == string(gate.ActionRefuse)
	for _, c := range d.Chunks {
		if !o.HasBest || c.Score > o.Best {
			o.Best, o.HasBest = c.Score, true
		}
	}
	return o, nil
}
