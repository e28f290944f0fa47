package abitest

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/ctxgate/ctxgate/internal/invariance"
)

// chatOf turns a gate request into the chat body a client sends through
// the filter: the question as the user message, the chunks as documents,
// and the request's other members (vector_metric, query_embedding) in the
// ctxgate extension, unless bare (then vector_metric is left out, for the
// plugin's configured default to supply).
func chatOf(t *testing.T, req []byte, bare bool) []byte {
	t.Helper()
	var r map[string]json.RawMessage
	if err := json.Unmarshal(req, &r); err != nil {
		t.Fatal(err)
	}
	ext := map[string]json.RawMessage{}
	for _, k := range []string{"vector_metric", "query_embedding"} {
		if v, ok := r[k]; ok && !(bare && k == "vector_metric") {
			ext[k] = v
		}
	}
	var query string
	if err := json.Unmarshal(r["query"], &query); err != nil {
		t.Fatal(err)
	}
	body := map[string]any{
		"model":     "m",
		"messages":  []map[string]string{{"role": "user", "content": query}},
		"documents": r["chunks"],
	}
	if len(ext) > 0 {
		body["ctxgate"] = ext
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// verdict is the action and confidence the filter reported to the client.
func verdict(t *testing.T, r Result) (string, float64) {
	t.Helper()
	h := r.ResponseHeaders
	action, _ := Header(h, "x-ctxgate-action")
	c, _ := Header(h, "x-ctxgate-confidence")
	f, err := strconv.ParseFloat(c, 64)
	if err != nil || action == "" || action == "error" {
		t.Fatalf("no decision: action %q confidence %q, local reply %+v", action, c, r.Local)
	}
	return action, f
}

// TestFilterMetricInvariance: through the Envoy filter in every ABI host,
// requests from seeded unit-length embeddings given as cosine
// similarities, cosine distances, l2 and squared l2 distances (the
// extension's vector_metric) get the same action and a confidence within
// 1e-5, with the default policy and with wikigr; the plugin's
// vector_metric configuration supplies the metric a body leaves out; and
// every host gives the same bytes.
func TestFilterMetricInvariance(t *testing.T) {
	reqs := invariance.Requests(17, 4)
	type key struct{ policy, name string }
	seen := map[key]struct {
		host string
		r    Result
	}{}
	for _, kind := range hostKinds(t) {
		t.Run(kind.name, func(t *testing.T) {
			for _, policy := range []string{"default", "wikigr"} {
				// One plugin at a time: the proxytest host is one
				// emulator per process.
				run := func(config string, each func(do func(name string, body []byte) (string, float64))) {
					h := kind.make(t)
					defer h.Close()
					if !h.Start(policyConfig(t, policy, config)) {
						t.Fatalf("plugin did not start: %q", h.Logs())
					}
					each(func(name string, body []byte) (string, float64) {
						r := h.Do(Exchange{Body: body, Headers: [][2]string{{"content-type", "application/json"}}, Upstream: answer("An answer [S1].")})
						k := key{policy, name}
						if prev, ok := seen[k]; ok {
							sameBytes(t, prev.host, prev.r, kind.name, r)
						} else {
							seen[k] = struct {
								host string
								r    Result
							}{kind.name, r}
						}
						return verdict(t, r)
					})
					if logs := h.Logs(); len(logs) > 0 {
						t.Errorf("log lines: %q", logs)
					}
				}
				type decided struct {
					action string
					conf   float64
				}
				cosine := make([]decided, len(reqs))
				same := func(what string, i int, a string, c float64) {
					if a != cosine[i].action || math.Abs(c-cosine[i].conf) > invariance.Tolerance {
						t.Errorf("%s, request %d %s: %s %v, as cosines %s %v", policy, i, what, a, c, cosine[i].action, cosine[i].conf)
					}
				}
				run("", func(do func(string, []byte) (string, float64)) {
					for i, req := range reqs {
						name := "request " + strconv.Itoa(i)
						cosine[i].action, cosine[i].conf = do(name+" cosine", chatOf(t, req, false))
						for _, m := range invariance.Restated {
							r, err := invariance.Restate(req, m)
							if err != nil {
								t.Fatal(err)
							}
							a, c := do(name+" "+m, chatOf(t, r, false))
							same("as "+m, i, a, c)
						}
					}
				})
				run(`"vector_metric":"l2_squared"`, func(do func(string, []byte) (string, float64)) {
					for i, req := range reqs {
						r, err := invariance.Restate(req, "l2_squared")
						if err != nil {
							t.Fatal(err)
						}
						a, c := do("request "+strconv.Itoa(i)+" l2_squared by default", chatOf(t, r, true))
						same("as l2_squared by the plugin's default", i, a, c)
					}
				})
			}
		})
	}
}
