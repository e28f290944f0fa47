package host

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/internal/invariance"
	"github.com/ctxgate/ctxgate/policies"
)

// The invariance of score conventions through the modules: requests from
// seeded unit-length embeddings, given as cosine similarities, cosine
// distances, l2 and squared l2 distances, decide the same (action, and
// confidence within 1e-5) with every preset, and every module writes the
// native bytes for each.
func TestMetricInvarianceModules(t *testing.T) {
	ctx := context.Background()
	reqs := invariance.Requests(11, 12)
	for _, name := range policies.Names() {
		pj, _ := policies.Get(name)
		native, err := NewNative(pj)
		if err != nil {
			t.Fatal(err)
		}
		var modules []Evaluator
		for _, m := range realModules {
			modules = append(modules, newRealGate(t, m, Options{Policy: pj, PoolSize: 1}))
		}
		for i, req := range reqs {
			base, _ := evaluateJSON(ctx, native, req)
			for _, metric := range append([]string{"cosine"}, invariance.Restated...) {
				r := req
				if metric != "cosine" {
					if r, err = invariance.Restate(req, metric); err != nil {
						t.Fatal(err)
					}
				}
				want, _ := evaluateJSON(ctx, native, r)
				if err := invariance.Same(base, want); err != nil {
					t.Errorf("%s, request %d as %s: %v", name, i, metric, err)
				}
				for j, ev := range modules {
					if got, _ := evaluateJSON(ctx, ev, r); !bytes.Equal(got, want) {
						t.Errorf("%s, request %d as %s, %s: %s\nnative: %s", name, i, metric, realModules[j], got, want)
					}
				}
			}
		}
	}
}

// evaluateJSON is the decision JSON, or the error JSON of a GateError.
func evaluateJSON(ctx context.Context, ev Evaluator, req []byte) ([]byte, error) {
	out, err := ev.Evaluate(ctx, req)
	var ge *GateError
	if errors.As(err, &ge) {
		return ge.JSON, err
	}
	return out, err
}

// Options.VectorMetric and RerankScale are the conventions of requests that
// state none, applied inside the guest (no request is rewritten), natively
// and in every module alike; the request's own win.
func TestScoreDefaultsModules(t *testing.T) {
	ctx := context.Background()
	req, err := os.ReadFile(filepath.Join("..", "testdata", "requests", "default", "inject.json"))
	if err != nil {
		t.Fatal(err)
	}
	restated, err := invariance.Restate(req, "l2_squared")
	if err != nil {
		t.Fatal(err)
	}
	// The restated request without its vector_metric: the host's default
	// must supply it.
	bare := bytes.Replace(restated, []byte(`"vector_metric":"l2_squared",`), nil, 1)
	if bytes.Equal(bare, restated) {
		t.Fatal("restated request has no vector_metric to remove")
	}
	o := Options{VectorMetric: gate.MetricL2Squared, RerankScale: gate.RerankLogit, PoolSize: 1}
	native, err := NewNativeOptions(o)
	if err != nil {
		t.Fatal(err)
	}
	evaluators := []Evaluator{native}
	names := []string{"native"}
	for _, m := range realModules {
		evaluators = append(evaluators, newRealGate(t, m, o))
		names = append(names, m.String())
	}
	plain, err := NewNative(nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := plain.Evaluate(ctx, restated)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evaluators {
		got, err := ev.Evaluate(ctx, bare)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: the default l2_squared gives %s (%v)\nwant %s", names[i], got, err, want)
		}
		// The request's own metric wins: cosines stated as such.
		if _, err := ev.Evaluate(ctx, bytes.Replace(req, []byte(`{`), []byte(`{"vector_metric":"cosine",`), 1)); err != nil {
			t.Errorf("%s: a cosine request under an l2_squared default: %v", names[i], err)
		}
	}
}

// Bad score conventions fail New (and NewNativeOptions) with an error
// naming them, before any request.
func TestScoreDefaultsRefused(t *testing.T) {
	ctx := context.Background()
	for _, o := range []Options{{VectorMetric: "ip"}, {RerankScale: "raw"}} {
		if _, err := New(ctx, o); err == nil || !strings.Contains(err.Error(), "Options.") {
			t.Errorf("New(%+v): %v", o, err)
		}
		if _, err := NewNativeOptions(o); err == nil {
			t.Errorf("NewNativeOptions(%+v): no error", o)
		}
	}
	// A metric without cosine levels for a policy that decides by them: the
	// guest refuses to load, naming vector_metric.
	wikigr, _ := policies.Get("wikigr")
	o := Options{Policy: wikigr, VectorMetric: gate.MetricDot, PoolSize: 1}
	if _, err := NewNativeOptions(o); !isField(err, "vector_metric") {
		t.Errorf("native: %v", err)
	}
	for _, m := range realModules {
		o.Wasm = builtModule(t, m)
		if _, err := New(ctx, o); !isField(err, "vector_metric") {
			t.Errorf("%s: %v", m, err)
		}
	}
}

func isField(err error, field string) bool {
	var ge *GateError
	return errors.As(err, &ge) && ge.Code == "bad_field" && ge.Field == field
}
