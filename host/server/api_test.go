package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/host"
	"github.com/ctxgate/ctxgate/internal/testenv"
	"github.com/ctxgate/ctxgate/internal/testgolden"
	"github.com/ctxgate/ctxgate/internal/testmodules"
	"github.com/ctxgate/ctxgate/policies"
)

// TestGateGolden posts every golden request to /v1/gate, through both
// modules, and requires the golden decision byte for byte: the server adds
// headers, never bytes.
func TestGateGolden(t *testing.T) {
	cases, err := testgolden.Load(filepath.Join("..", "..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []host.Module{host.ModuleTinyGo, host.ModuleGo} {
		for _, name := range policies.Names() {
			t.Run(m.String()+"/"+name, func(t *testing.T) {
				reqs := testgolden.Of(cases, name)
				if len(reqs) == 0 {
					testenv.Missing(t, "no golden requests for "+name)
				}
				s := start(t, Options{Module: m, Policy: PolicySource{Path: name}})
				for _, c := range reqs {
					body, want, p := c.Request, c.Decision, c.RequestPath
					if want == nil {
						t.Fatalf("%s: no golden decision", p)
					}
					r := post(t, s.url+"/v1/gate", body)
					if c.IsError() {
						// A request the gate refuses: the golden error JSON.
						if r.status != http.StatusUnprocessableEntity || !bytes.Equal(r.body, bytes.TrimSpace(want)) {
							t.Fatalf("%s: status %d\n got %s\nwant %s", p, r.status, truncate(r.body), truncate(want))
						}
						continue
					}
					if r.status != 200 || !bytes.Equal(r.body, bytes.TrimSpace(want)) {
						t.Fatalf("%s: status %d\n got %s\nwant %s", p, r.status, truncate(r.body), truncate(want))
					}
					d := mustDecision(t, r.body)
					for h, v := range map[string]string{HeaderAction: d.Action, HeaderLevel: d.Level,
						HeaderConfidence: d.confidenceRaw(), HeaderPolicy: d.Policy.label()} {
						if got := r.header.Get(h); got != v {
							t.Errorf("%s: %s = %q, want %q", p, h, got, v)
						}
					}
					if r.header.Get(HeaderDecisionID) == "" {
						t.Errorf("%s: no decision id", p)
					}
					if (d.Action == "refuse") != (r.header.Get(HeaderRefusal) == "hard") {
						t.Errorf("%s: refusal header %q for action %s", p, r.header.Get(HeaderRefusal), d.Action)
					}
				}
			})
		}
	}
}

func TestDecisionIDsAreUnique(t *testing.T) {
	s := start(t, Options{})
	seen := map[string]bool{}
	for range 20 {
		id := post(t, s.url+"/v1/gate", request(t, "default", "inject")).header.Get(HeaderDecisionID)
		if seen[id] {
			t.Fatalf("decision id %s issued twice", id)
		}
		seen[id] = true
	}
}

func TestValidate(t *testing.T) {
	s := start(t, Options{GapLog: filepath.Join(t.TempDir(), "gaps.jsonl")})
	r := post(t, s.url+"/v1/validate", []byte(`{"answer":"Open Settings, then Security [S1]. Ask your admin [S7].","tags":["S1","S2"]}`))
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var v struct {
		SoftRefusal bool     `json:"soft_refusal"`
		Cited       []string `json:"cited"`
		Unknown     []string `json:"unknown"`
	}
	decode(t, r.body, &v)
	if v.SoftRefusal || !contains(v.Cited, "S1") || !contains(v.Unknown, "S7") {
		t.Fatalf("validation = %s", r.body)
	}

	// A soft refusal with the decision's id is logged with its query.
	g := post(t, s.url+"/v1/gate", request(t, "default", "caveat"))
	id := g.header.Get(HeaderDecisionID)
	line := refusalLine(t, "default")
	r = post(t, s.url+"/v1/validate", mustJSON(t, map[string]any{"answer": line, "tags": []string{"S1"}}), HeaderDecisionID, id)
	decode(t, r.body, &v)
	if !v.SoftRefusal {
		t.Fatalf("the policy's refusal line is not a soft refusal: %s", r.body)
	}
	evs := readGaps(t, s)
	last := evs[len(evs)-1]
	var req struct{ Query string }
	decode(t, request(t, "default", "caveat"), &req)
	if last.Kind != "refusal_soft" || last.DecisionID != id || last.Query != req.Query {
		t.Fatalf("gap event = %+v", last)
	}

	// Bad answers are 422 naming the field.
	wantError(t, post(t, s.url+"/v1/validate", []byte(`{"answer":1}`)), 422, "bad_answer", "answer")
	wantError(t, post(t, s.url+"/v1/validate", []byte(`{"answer":"x","tags":["X1"]}`)), 422, "bad_answer", "tags[0]")
}

// refusalLine is the policy's soft-refusal line (messages.refusal_line, or
// the gate's default).
func refusalLine(t testing.TB, policy string) string {
	t.Helper()
	v, err := jsonx.Parse(preset(t, policy), 64)
	if err != nil {
		t.Fatal(err)
	}
	if l := v.Get("messages").Get("refusal_line").Str(); l != "" {
		return l
	}
	return "I don't have enough information to answer this from the provided sources."
}

func TestPolicyEndpoint(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.json")
	os.WriteFile(path, preset(t, "support-agent"), 0o644)
	s := start(t, Options{Policy: PolicySource{Path: path}})
	r := do(t, http.MethodGet, s.url+"/v1/policy", nil)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var p struct {
		Policy   policyRef       `json:"policy"`
		Source   string          `json:"source"`
		LoadedAt string          `json:"loaded_at"`
		Document json.RawMessage `json:"document"`
	}
	decode(t, r.body, &p)
	doc, _ := jsonx.Parse(preset(t, "support-agent"), 64)
	sum := sha256.Sum256(jsonx.AppendCanonical(nil, &doc))
	if p.Policy.Name != "support-agent" || p.Policy.SHA256 != hex.EncodeToString(sum[:]) || p.Source != path || p.LoadedAt == "" {
		t.Fatalf("policy = %+v, want sha256 %x of the canonical document", p, sum)
	}
	got, _ := jsonx.Parse(p.Document, 64)
	if !bytes.Equal(jsonx.AppendCanonical(nil, &got), jsonx.AppendCanonical(nil, &doc)) {
		t.Fatalf("document differs from the file")
	}
}

func TestHealthz(t *testing.T) {
	s := start(t, Options{PoolSize: 3})
	r := do(t, http.MethodGet, s.url+"/healthz", nil)
	var h struct {
		Status string    `json:"status"`
		Policy policyRef `json:"policy"`
		Module string    `json:"module"`
		Pool   struct{ Size int }
	}
	decode(t, r.body, &h)
	if r.status != 200 || h.Status != "ok" || h.Policy.Name != "default" || h.Module != "custom" || h.Pool.Size != 3 {
		t.Fatalf("healthz %d %s", r.status, r.body)
	}
}

// TestNoPolicy: a server started without a loadable policy answers 503 on
// every gate endpoint, and recovers when the file is fixed and reloaded.
func TestNoPolicy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.json")
	os.WriteFile(path, []byte(`{"name":`), 0o644)
	s := start(t, Options{Policy: PolicySource{Path: path}})
	if r := do(t, http.MethodGet, s.url+"/healthz", nil); r.status != 503 || !strings.Contains(string(r.body), "no_policy") {
		t.Fatalf("healthz %d %s", r.status, r.body)
	}
	for _, ep := range []string{"/v1/gate", "/v1/validate"} {
		wantError(t, post(t, s.url+ep, request(t, "default", "inject")), 503, "bad_policy", "policy")
	}
	wantError(t, do(t, http.MethodGet, s.url+"/v1/policy", nil), 503, "bad_policy", "policy")
	os.WriteFile(path, preset(t, "default"), 0o644)
	if err := s.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := post(t, s.url+"/v1/gate", request(t, "default", "inject")); r.status != 200 {
		t.Fatalf("after reload: %d %s", r.status, r.body)
	}
}

func TestRequirePolicy(t *testing.T) {
	_, err := New(context.Background(), Options{Wasm: testmodules.Bytes(t, host.ModuleTinyGo), RequirePolicy: true, Logger: slog.New(slog.DiscardHandler),
		Policy: PolicySource{Path: "no-such-preset-or-file"}, ReloadPoll: -1})
	if err == nil || !strings.Contains(err.Error(), "not a preset name (presets: default, wikigr,") {
		t.Fatalf("err = %v", err)
	}
}

func TestErrors(t *testing.T) {
	s := start(t, Options{MaxBodyBytes: 4096})
	u := s.url + "/v1/gate"
	wantError(t, post(t, u, []byte(`{"query":`)), 400, "bad_json", "")
	wantError(t, post(t, u, []byte(``)), 400, "bad_json", "")
	wantError(t, post(t, u, []byte(`{"query":"q","chunks":[{"id":"a","text":"t","scores":{"vector":"high"}}]}`)), 422, "bad_field", "chunks[0].scores.vector")
	wantError(t, post(t, u, []byte(`{"query":"   "}`)), 422, "bad_field", "query")
	big := []byte(`{"query":"` + strings.Repeat("a", 5000) + `"}`)
	wantError(t, post(t, u, big), 413, "limit", "body")
	wantError(t, do(t, http.MethodGet, u, nil), 405, codeMethod, "")
	wantError(t, do(t, http.MethodPost, s.url+"/v1/nothing", []byte("{}")), 404, codeNotFound, "")
	wantGatewayError(t, post(t, s.url+"/v1/chat/completions", []byte("{}")), 404, codeNoUpstream, "")
	// A chunked body (no Content-Length) over the limit is cut off while
	// read, not held.
	req, _ := http.NewRequest(http.MethodPost, u, struct{ *bytes.Reader }{bytes.NewReader(big)})
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Fatalf("chunked oversize: status %d", resp.StatusCode)
	}
}

// TestPolicyLimitIsHonoured: a policy's own input limits (max_chunks) come
// back as 413 naming the field, from the guest, unchanged.
func TestPolicyLimitIsHonoured(t *testing.T) {
	var p map[string]any
	json.Unmarshal(preset(t, "default"), &p)
	p["limits"] = map[string]any{"max_chunks": 1}
	path := filepath.Join(t.TempDir(), "p.json")
	os.WriteFile(path, mustJSON(t, p), 0o644)
	s := start(t, Options{Policy: PolicySource{Path: path}})
	wantError(t, post(t, s.url+"/v1/gate", request(t, "default", "inject")), 413, "limit", "chunks")
}

func TestRequireEmbeddings(t *testing.T) {
	on := true
	s := start(t, Options{RequireEmbeddings: true, Policy: PolicySource{SufficientContext: &SufficientContext{Enabled: &on}}})
	wantError(t, post(t, s.url+"/v1/gate", request(t, "sufficient-context", "partial_caveat")), 422, "bad_field", "query_embedding")
	if r := post(t, s.url+"/v1/gate", request(t, "sufficient-context", "sufficient_with_embeddings")); r.status != 200 {
		t.Fatalf("with embeddings: %d %s", r.status, r.body)
	}
}
