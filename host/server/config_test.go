package server

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/gate/bundle"
)

// TestExampleConfig: examples/serve/ctxgate.yaml keeps the built-in default
// policy; its commented-out sufficient_context block, once uncommented,
// selects the sufficient-context preset, and the server says so at start.
func TestExampleConfig(t *testing.T) {
	path := filepath.Join("..", "..", "examples", "serve", "ctxgate.yaml")
	c, err := ReadFileConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	o, err := c.Options()
	if err != nil {
		t.Fatal(err)
	}
	if o.Policy.SufficientContext != nil || o.Policy.Path != "" || o.GateTimeout != time.Second || o.UpstreamIdleTimeout != 120*time.Second ||
		o.GapLogKeep != 5 || o.LargeBodyBytes != 256<<10 || o.ReloadPoll != 2*time.Second || o.GatewayOff || o.Upstream == "" ||
		o.DocumentsPath[0] != "documents" || o.CaveatDelivery != CaveatPrefix || c.AccessLog != "stdout" {
		t.Fatalf("options %+v", o)
	}
	l, err := o.Policy.Load()
	if err != nil {
		t.Fatal(err)
	}
	if l.source != "built-in default" {
		t.Fatalf("the example config serves %q, not the built-in default", l.source)
	}

	// The block, uncommented.
	b, _ := os.ReadFile(path)
	text := string(b)
	i := strings.Index(text, "# sufficient_context:")
	if i < 0 {
		t.Fatal("no commented sufficient_context block")
	}
	block := strings.ReplaceAll(text[i:], "\n# ", "\n")
	c, err = ParseFileConfig([]byte(text[:i] + strings.TrimPrefix(block, "# ")))
	if err != nil {
		t.Fatal(err)
	}
	o, _ = c.Options()
	sc := o.Policy.SufficientContext
	if !sc.On() || *sc.MinContexts != 2 || *sc.Thresholds.Sufficient != 0.8 || *sc.DeclineInsufficient {
		t.Fatalf("uncommented block %+v", sc)
	}
	if l, err = o.Policy.Load(); err != nil || !strings.Contains(l.source, "sufficient-context") {
		t.Fatalf("source %q (%v): the block should select the sufficient-context preset", l.source, err)
	}
	s := start(t, Options{Policy: o.Policy})
	if !strings.Contains(s.log.String(), "NOT the built-in default policy") {
		t.Errorf("no WARN line at start:\n%s", s.log.String())
	}
}

func TestConfigErrors(t *testing.T) {
	for doc, want := range map[string]string{
		"listen: x\ncolour: red\n":                                             "colour",
		"limits:\n  gate_timeout: soon\n":                                      "soon",
		"sufficient_context:\n  thresholds:\n    partial: 1.5\n":               "partial",
		"sufficient_context:\n  min_contexts: 0\n":                             "min_contexts",
		"sufficient_context:\n  thresholds: {sufficient: 0.5, partial: 0.6}\n": "partial must be below",
	} {
		if _, err := ParseFileConfig([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want it to name %q", doc, err, want)
		}
	}
	for doc, want := range map[string]string{
		"module: rust\n":                           "module",
		"trust: [k.pub]\ntrust_mode: rsa\n":        `unknown mode "rsa"`,
		"trust_mode: ed25519\n":                    "no trust files are given",
		"policy: p.json\ntrust_mode: hybrid\n":     "no trust files are given",
		"trust: [k.pub]\ntrust_mode: \"ML-DSA\"\n": "unknown mode",
		"vector_metric: euclid\n":                  `vector_metric (--vector-metric): unknown metric "euclid"`,
		"rerank_scale: odds\n":                     `rerank_scale (--rerank-scale): unknown scale "odds"`,
	} {
		c, err := ParseFileConfig([]byte(doc))
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if _, err := c.Options(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want it to name %q", doc, err, want)
		}
	}
	for name, want := range map[string]bundle.Mode{"": bundle.Hybrid, "hybrid": bundle.Hybrid, "ed25519": bundle.Ed25519Only, "ml-dsa-65": bundle.MLDSA65Only, "ml-dsa": bundle.MLDSA65Only} {
		c, _ := ParseFileConfig([]byte("trust: [k.pub]\ntrust_mode: \"" + name + "\"\n"))
		if o, err := c.Options(); err != nil || o.Policy.TrustMode != want {
			t.Errorf("trust_mode %q: %v, %v", name, o.Policy.TrustMode, err)
		}
	}
	if c, _ := ParseFileConfig([]byte("vector_metric: l2_squared\nrerank_scale: logit\n")); c != nil {
		if o, err := c.Options(); err != nil || o.VectorMetric != gate.MetricL2Squared || o.RerankScale != gate.RerankLogit {
			t.Errorf("vector_metric, rerank_scale: %q %q %v", o.VectorMetric, o.RerankScale, err)
		}
	}
	c, _ := ParseFileConfig([]byte("caveat_delivery: append\n"))
	if _, err := c.Options(); err == nil || !strings.Contains(err.Error(), "caveat_delivery") {
		t.Errorf("unknown caveat_delivery: %v", err)
	}
	if c, err := ParseFileConfig(nil); err != nil || c.Listen != "" {
		t.Errorf("empty file: %v", err)
	}
}

// TestSufficientContextMapping runs the sufficient-context gateway's config
// through the real gate: decline_insufficient false turns the
// sufficient-context preset's refusal into a caveat (and no context at all
// into the fallback prompt); true keeps refusing; thresholds move the band
// minimums.
func TestSufficientContextMapping(t *testing.T) {
	yes, no, two := true, false, 2
	high := 0.95
	for _, tc := range []struct {
		decline          *bool
		insufficient     string
		noContext        string
		sufficientThresh *float64
	}{
		{nil, "refuse", "refuse", nil},
		{&no, "caveat", "fallback", nil},
		{&yes, "refuse", "refuse", &high},
	} {
		sc := &SufficientContext{MinContexts: &two, DeclineInsufficient: tc.decline}
		sc.Thresholds.Sufficient = tc.sufficientThresh
		s := start(t, Options{Policy: PolicySource{SufficientContext: sc}})
		for req, want := range map[string]string{"insufficient_decline": tc.insufficient, "no_context": tc.noContext} {
			r := post(t, s.url+"/v1/gate", request(t, "sufficient-context", req))
			if got := r.header.Get(HeaderAction); got != want {
				t.Errorf("decline=%v %s: action %s, want %s", tc.decline, req, got, want)
			}
		}
		var p struct {
			Document struct {
				Bands []struct {
					Min   float64
					Level string
				}
			}
		}
		decode(t, do(t, http.MethodGet, s.url+"/v1/policy", nil).body, &p)
		want := 0.8
		if tc.sufficientThresh != nil {
			want = *tc.sufficientThresh
		}
		if p.Document.Bands[0].Level != "sufficient" || p.Document.Bands[0].Min != want {
			t.Errorf("bands %+v, want sufficient min %v", p.Document.Bands, want)
		}
	}
}

func TestSufficientContextNeedsTheSignal(t *testing.T) {
	two := 2
	ps := PolicySource{Path: "wikigr", SufficientContext: &SufficientContext{MinContexts: &two}}
	if _, err := ps.Load(); err == nil || !strings.Contains(err.Error(), "signals.sufficiency") {
		t.Fatalf("err = %v", err)
	}
	// A signed policy cannot be rewritten.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "b.json"), []byte(`{"ctxgate_bundle":1,"policy":{},"signatures":[]}`), 0o644)
	ps = PolicySource{Path: filepath.Join(dir, "b.json"), SufficientContext: &SufficientContext{MinContexts: &two}}
	if _, err := ps.Load(); err == nil || !strings.Contains(err.Error(), "signed") {
		t.Fatalf("err = %v", err)
	}
}

// The configured vector_metric is the default of every request that states
// none, natively and through the module: a request of squared l2
// distances decides as its cosines do.
func TestServeVectorMetric(t *testing.T) {
	cosines := request(t, "default", "inject")
	restated, err := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", "default", "inject.l2_squared.json"))
	if err != nil {
		t.Fatal(err)
	}
	bare := []byte(strings.Replace(string(restated), `"vector_metric": "l2_squared",`, "", 1))
	if string(bare) == string(restated) {
		t.Fatal("no vector_metric to leave out")
	}
	for _, native := range []bool{false, true} {
		plain := start(t, Options{Native: native})
		want := post(t, plain.url+"/v1/gate", restated)
		s := start(t, Options{Native: native, VectorMetric: gate.MetricL2Squared})
		got := post(t, s.url+"/v1/gate", bare)
		if got.status != 200 || string(got.body) != string(want.body) {
			t.Errorf("native %v: %d %s\nwant %s", native, got.status, truncate(got.body), truncate(want.body))
		}
		// A request's own vector_metric wins.
		stated := []byte(strings.Replace(string(cosines), "{", `{"vector_metric":"cosine",`, 1))
		if r, w := post(t, s.url+"/v1/gate", stated), post(t, plain.url+"/v1/gate", cosines); r.status != 200 || string(r.body) != string(w.body) {
			t.Errorf("native %v: cosines stated under an l2_squared default: %d %s\nwant %s", native, r.status, truncate(r.body), truncate(w.body))
		}
	}
}
