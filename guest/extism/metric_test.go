//go:build !wasip1

package main

import (
	"bytes"
	"testing"

	"github.com/ctxgate/ctxgate/internal/abi"
	"github.com/ctxgate/ctxgate/internal/invariance"
	"github.com/ctxgate/ctxgate/policies"
)

// TestModuleMetricInvariance: through both modules (the Extism ABI),
// requests from seeded unit-length embeddings given as cosine
// similarities, cosine distances, l2 and squared l2 distances decide the
// same (action, and confidence within 1e-5) with every preset, byte for
// byte as natively; and the vector_metric config key supplies the metric a
// request leaves out.
func TestModuleMetricInvariance(t *testing.T) {
	reqs := invariance.Requests(5, 8)
	for _, m := range builtModules {
		t.Run(m.name, func(t *testing.T) {
			wasm := moduleBytes(t, m.file)
			for _, pol := range policies.Names() {
				doc, _ := policies.Get(pol)
				config := map[string]string{abi.ConfigPolicy: string(doc)}
				mod, nat := newPlugin(t, wasm, config, 0), native(config)
				byDefault := map[string]string{abi.ConfigPolicy: string(doc), abi.ConfigVectorMetric: "l2"}
				modL2 := newPlugin(t, wasm, byDefault, 0)
				for i, req := range reqs {
					base, baseErr := call(t, mod, "evaluate", req)
					for _, metric := range invariance.Restated {
						r, err := invariance.Restate(req, metric)
						if err != nil {
							t.Fatal(err)
						}
						out, errJSON := call(t, mod, "evaluate", r)
						wantOut, wantErr := nat.Evaluate(r)
						if !bytes.Equal(out, wantOut) || !bytes.Equal(errJSON, wantErr) {
							t.Errorf("%s, request %d as %s: module and native differ\nmodule: %s%s\nnative: %s%s", pol, i, metric, out, errJSON, wantOut, wantErr)
						}
						if err := invariance.Same(append(base, baseErr...), append(out, errJSON...)); err != nil {
							t.Errorf("%s, request %d as %s: %v", pol, i, metric, err)
						}
						if metric != "l2" {
							continue
						}
						bare := bytes.Replace(r, []byte(`"vector_metric":"l2",`), nil, 1)
						if got, gotErr := call(t, modL2, "evaluate", bare); !bytes.Equal(got, out) || !bytes.Equal(gotErr, errJSON) {
							t.Errorf("%s, request %d: config vector_metric l2 gives\n%s%s\nnot\n%s%s", pol, i, got, gotErr, out, errJSON)
						}
					}
				}
			}
		})
	}
}
