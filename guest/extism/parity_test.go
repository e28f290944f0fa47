//go:build !wasip1

package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/guest/extism/plugin"
	"github.com/ctxgate/ctxgate/internal/abi"
	"github.com/ctxgate/ctxgate/internal/testgolden"
	"github.com/ctxgate/ctxgate/policies"
	extism "github.com/extism/go-sdk"
)

// TestModuleParity: the same (policy, request) gives byte-identical output
// natively, in the TinyGo module and in the standard-Go module. Inputs are
// the golden requests in testdata/ (also checked against their golden
// decisions) plus generated requests under every preset policy, which reach
// the paths golden files may not (NaN-free extremes, embeddings, merges).
func TestModuleParity(t *testing.T) {
	type input struct {
		name, policy string
		request      []byte
		golden       []byte // nil when there is no golden decision
	}
	var inputs []input
	for _, g := range goldenRequests(t) {
		inputs = append(inputs, input{g.name, g.policy, g.request, g.decision})
	}
	for i, req := range generatedRequests(40) {
		for _, pol := range policies.Names() {
			inputs = append(inputs, input{"gen" + itoa(i) + "/" + pol, pol, req, nil})
		}
	}
	for _, m := range builtModules {
		t.Run(m.name, func(t *testing.T) {
			wasm := moduleBytes(t, m.file)
			plugins := map[string]*pluginPair{}
			decided := 0
			for _, in := range inputs {
				pp := plugins[in.policy]
				if pp == nil {
					doc, ok := policies.Get(in.policy)
					if !ok {
						t.Fatalf("%s: no preset policy %q", in.name, in.policy)
					}
					config := map[string]string{abi.ConfigPolicy: string(doc)}
					pp = &pluginPair{newPlugin(t, wasm, config, 0), native(config)}
					plugins[in.policy] = pp
				}
				out, errJSON := call(t, pp.module, "evaluate", in.request)
				wantOut, wantErr := pp.native.Evaluate(in.request)
				if !bytes.Equal(out, wantOut) || !bytes.Equal(errJSON, wantErr) {
					t.Errorf("%s: module and native differ\nmodule: %s%s\nnative: %s%s", in.name, out, errJSON, wantOut, wantErr)
					continue
				}
				if out != nil {
					decided++
				}
				// The golden file is the decision, or the error JSON of a
				// request the gate must refuse.
				if in.golden != nil && !bytes.Equal(append(out, errJSON...), bytes.TrimSpace(in.golden)) {
					t.Errorf("%s: differs from its golden decision\ngot:  %s%s\nwant: %s", in.name, out, errJSON, in.golden)
				}
			}
			// Parity of error bytes alone would prove little: most inputs must decide.
			if decided*2 < len(inputs) {
				t.Errorf("only %d of %d inputs decided; the generator no longer makes valid requests", decided, len(inputs))
			}
			t.Logf("%d inputs, %d decisions byte-identical to native", len(inputs), decided)
		})
	}
}

type pluginPair struct {
	module *extism.Plugin
	native *plugin.Plugin
}

type golden struct {
	name, policy      string
	request, decision []byte
}

// goldenRequests are the golden cases (internal/testgolden); a case
// without its decision file yet has a nil decision.
func goldenRequests(t *testing.T) []golden {
	cases, err := testgolden.Load(filepath.Join("..", "..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	var out []golden
	for _, c := range cases {
		out = append(out, golden{c.Policy + "/" + c.Name, c.Policy, c.Request, c.Decision})
	}
	if len(out) == 0 {
		t.Log("no golden requests in testdata/requests yet; generated requests only")
	}
	return out
}

var words = strings.Fields(`the gate decides whether retrieved evidence supports an answer
policy threshold chunk score vector bm25 rerank fusion freshness trust citation refusal
kubernetes pod restart memory limit billing invoice refund password reset latency error`)

// generatedRequests makes n varied, valid requests from a fixed seed: the
// same requests on every run, so a failure is reproducible.
func generatedRequests(n int) [][]byte {
	r := rand.New(rand.NewPCG(3, 14))
	text := func(k int) string {
		var b strings.Builder
		for i := 0; i < k; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	emb := func(d int) []float64 {
		v := make([]float64, d)
		for i := range v {
			v[i] = r.Float64()*2 - 1
		}
		return v
	}
	chunks := func(k, dims int) []map[string]any {
		out := make([]map[string]any, k)
		for i := range out {
			scores := map[string]any{"vector": r.Float64()*1.2 - 0.2}
			if r.IntN(2) == 0 {
				scores["bm25"] = r.Float64() * 20
			}
			if r.IntN(3) == 0 {
				scores["rerank"] = r.Float64()*10 - 5
			}
			if r.IntN(3) == 0 {
				scores["rrf"] = r.Float64() / 30
			}
			c := map[string]any{
				"id": "c" + itoa(i), "doc_id": "d" + itoa(r.IntN(4)),
				"title": text(3), "text": text(5 + r.IntN(60)), "scores": scores,
			}
			if r.IntN(3) == 0 {
				c["updated_at"] = "2025-0" + itoa(1+r.IntN(9)) + "-1" + itoa(r.IntN(10)) + "T12:00:00Z"
			}
			if r.IntN(4) == 0 {
				c["trust"] = r.Float64()
			}
			if dims > 0 {
				c["embedding"] = emb(dims)
			}
			out[i] = c
		}
		return out
	}
	reqs := make([][]byte, n)
	for i := range reqs {
		dims := 0
		if i%3 == 0 {
			dims = 8
		}
		req := map[string]any{"query": text(2 + r.IntN(8)), "now": "2025-11-01T00:00:00Z"}
		if dims > 0 {
			req["query_embedding"] = emb(dims)
		}
		if i%5 == 4 {
			req["results_per_query"] = [][]map[string]any{chunks(1+r.IntN(5), dims), chunks(1+r.IntN(5), dims)}
		} else {
			req["chunks"] = chunks(r.IntN(9), dims)
		}
		b, err := json.Marshal(req)
		if err != nil {
			panic(err)
		}
		reqs[i] = b
	}
	return reqs
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
