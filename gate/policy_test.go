package gate

import (
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/policies"
)

const minimalPolicy = `{"name":"p","version":"1","signals":{"similarity":{}},
 "confidence":{"signal":"max_similarity"},
 "bands":[{"min":0.5,"label":"OK","level":"sufficient","action":"inject"},{"min":0,"label":"NO","level":"insufficient","action":"fallback"}]}`

func TestPresetsLoad(t *testing.T) {
	for _, n := range policies.Names() {
		e := presetEngine(t, n)
		if e.Ref().Name != n || len(e.Ref().SHA256) != 64 {
			t.Errorf("%s: ref %+v", n, e.Ref())
		}
	}
	def, err := NewEngine(nil)
	if err != nil || def.Ref().Name != "default" {
		t.Fatalf("empty policy selects default: %v", err)
	}
	if got := string(def.Describe()); !strings.HasPrefix(got, `{"version":"0.1.0","schema_version":"1","policy":{"name":"default","version":"5","sha256":"`) {
		t.Fatalf("describe %s", got)
	}
}

// The sha256 is over the canonical form: formatting and key order do not
// change it, a value does.
func TestPolicySHA(t *testing.T) {
	a, _ := NewEngine([]byte(minimalPolicy))
	reordered := `{"version":"1","name":"p","confidence":{"signal":"max_similarity"},"signals":{"similarity":{}},"bands":[{"label":"OK","min":0.5,"level":"sufficient","action":"inject"},{"min":0,"label":"NO","level":"insufficient","action":"fallback"}]}`
	b, err := NewEngine([]byte(reordered))
	if err != nil {
		t.Fatal(err)
	}
	if a.Ref().SHA256 != b.Ref().SHA256 {
		t.Fatal("canonical hash must not depend on formatting")
	}
	c, _ := NewEngine([]byte(strings.Replace(minimalPolicy, `"min":0.5`, `"min":0.6`, 1)))
	if c.Ref().SHA256 == a.Ref().SHA256 {
		t.Fatal("a changed value must change the hash")
	}
}

func TestPolicyErrors(t *testing.T) {
	sub := func(old, new string) string { return strings.Replace(minimalPolicy, old, new, 1) }
	cases := []struct{ doc, field, msg string }{
		{`[]`, "", "must be an object"},
		{`{`, "", "invalid JSON"},
		{sub(`"name":"p",`, `"name":"p","colour":1,`), "colour", "unknown field"},
		{sub(`"name":"p",`, ``), "name", "is required"},
		{sub(`"similarity":{}`, `"similarity":{"x":1}`), "signals.similarity.x", "unknown field"},
		{sub(`"min":0.5`, `"min":1.5`), "bands[0].min", "[0,1]"},
		{sub(`"min":0.5`, `"min":0`), "bands[1].min", "strictly descending"},
		{sub(`{"min":0,"label":"NO"`, `{"min":0.1,"label":"NO"`), "bands[1].min", "min 0"},
		{sub(`"action":"inject"`, `"action":"answer"`), "bands[0].action", "unknown action"},
		{sub(`"level":"sufficient"`, `"level":"great"`), "bands[0].level", "unknown level"},
		{sub(`"signal":"max_similarity"`, `"signal":"vibes"`), "confidence.signal", "unknown signal"},
		{sub(`"signal":"max_similarity"`, `"signal":"evidence_top"`), "confidence.signal", "needs signals.evidence"},
		{sub(`{"signal":"max_similarity"}`, `{"combine":"weighted","terms":[{"signal":"max_similarity","weight":0.6}]}`), "confidence.terms", "sum to 1"},
		{sub(`{"signal":"max_similarity"}`, `{"combine":"average","terms":[]}`), "confidence.combine", "unknown combination"},
		{sub(`{"signal":"max_similarity"}`, `{"signal":"max_similarity","combine":"weighted"}`), "confidence", "not both"},
		{sub(`"signals":{"similarity":{}}`, `"signals":{"similarity":{},"evidence":{"weights":{"vector":0.5,"bm25":0.6}}}`), "signals.evidence.weights", "sum to 1"},
		{sub(`"signals":{"similarity":{}}`, `"signals":{"similarity":{},"evidence":{"low_confidence":2}}`), "signals.evidence.low_confidence", "[0,1]"},
		{sub(`"signals":{"similarity":{}}`, `"signals":{"similarity":{},"evidence":{"freshness":{"decay":"exp","days":3}}}`), "signals.evidence.freshness.decay", "unknown decay"},
		{sub(`"name":"p",`, `"name":"p","filters":{"quality_min":0.3},`), "filters.quality_min", "needs signals.quality"},
		{sub(`"name":"p",`, `"name":"p","filters":{"evidence_floor":-0.1},"signals":{"evidence":{}},`), "", ""}, // duplicate key: parser error
		{sub(`"name":"p",`, `"name":"p","order_by":"random",`), "order_by", "unknown ordering"},
		{sub(`"name":"p",`, `"name":"p","merge":{"max_results":21},`), "merge.max_results", "[1,20]"},
		{sub(`"name":"p",`, `"name":"p","merge":{"max_results":2.5},`), "merge.max_results", "integer"},
		{sub(`"name":"p",`, `"name":"p","messages":{"instructions":["a"]},`), "messages.instructions", "exactly 4"},
		{sub(`"name":"p",`, `"name":"p","limits":{"max_chunks":0},`), "limits.max_chunks", ">= 1"},
		{sub(`"name":"p",`, `"name":"p","no_chunks":{"action":"shrug"},`), "no_chunks.action", "unknown action"},
		{sub(`"similarity":{}`, `"retrieval":{"raw_scores":"yes"}`), "signals.retrieval.raw_scores", "must be"},
		{sub(`"similarity":{}`, `"retrieval":{"rag_confidence":1}`), "signals.retrieval.rag_confidence", "must be"},
		{sub(`"similarity":{}`, `"retrieval":{"details":true}`), "signals.retrieval.details", "unknown field"},
		// The default policy's signals and knobs.
		{sub(`"similarity":{}`, `"answer_coverage":{"bias":1,"length":2}`), "signals.answer_coverage.length", "unknown field"},
		{sub(`"similarity":{}`, `"answer_coverage":{"coverage":101}`), "signals.answer_coverage.coverage", "[-100,100]"},
		{sub(`"similarity":{}`, `"chunk_relevance":{"below_top":"x"}`), "signals.chunk_relevance.below_top", "must be"},
		{sub(`"similarity":{}`, `"chunk_relevance":{"both":-100.5}`), "signals.chunk_relevance.both", "[-100,100]"},
		{sub(`"signal":"max_similarity"`, `"signal":"answer_coverage"`), "confidence.signal", "needs signals.answer_coverage"},
		{sub(`"name":"p",`, `"name":"p","filters":{"relevance_min":0.35},`), "filters.relevance_min", "needs signals.chunk_relevance"},
		{sub(`"signals":{"similarity":{}}`, `"signals":{"similarity":{},"chunk_relevance":{}},"filters":{"relevance_min":1.2}`), "filters.relevance_min", "[0,1]"},
		{sub(`"name":"p",`, `"name":"p","order_by":"chunk_relevance",`), "order_by", "chunk_relevance needs signals.chunk_relevance"},
		{sub(`"name":"p",`, `"name":"p","order_by":["vector","answer_coverage"],`), "order_by[1]", "answer_coverage needs signals.answer_coverage"},
		{sub(`"name":"p",`, `"name":"p","order_by":["vector","random"],`), "order_by[1]", "unknown ordering"},
		{sub(`"name":"p",`, `"name":"p","order_by":[],`), "order_by", "at least one"},
		{sub(`"name":"p",`, `"name":"p","order_by":["vector",1],`), "order_by[1]", "must be"},
		{sub(`"name":"p",`, `"name":"p","order_by":{"vector":1},`), "order_by", "a string or an array"},
		{sub(`"name":"p",`, `"name":"p","order_by":["input","input","input","input","input","input","input","input","input"],`), "order_by", "at most 8"},
	}
	for i, c := range cases {
		_, err := NewEngine([]byte(c.doc))
		if err == nil {
			t.Errorf("case %d: no error", i)
			continue
		}
		ge, ok := err.(*Error)
		if !ok || ge.Code != CodeBadPolicy {
			t.Errorf("case %d: %T %v", i, err, err)
			continue
		}
		if c.msg == "" {
			continue
		}
		if ge.Field != c.field || !strings.Contains(ge.Message, c.msg) {
			t.Errorf("case %d: got %q %q want %q %q", i, ge.Field, ge.Message, c.field, c.msg)
		}
	}
}

func TestLogisticCombination(t *testing.T) {
	doc := strings.Replace(minimalPolicy, `{"signal":"max_similarity"}`,
		`{"combine":"logistic","bias":-2,"terms":[{"signal":"max_similarity","weight":4}]}`, 1)
	e, err := NewEngine([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	d := mustDecide(t, e, &Request{Query: "q", Chunks: []Chunk{{ID: "a", Scores: vec(0.5)}}})
	if d.Confidence != 0.5 {
		t.Fatalf("sigmoid(-2 + 4·0.5) = 0.5, got %v", d.Confidence)
	}
	// A missing signal takes its term's missing value.
	d = mustDecide(t, e, &Request{Query: "q", Chunks: []Chunk{{ID: "a"}}})
	if !near(d.Confidence, snap(sigmoid(-2))) {
		t.Fatalf("missing → 0: %v", d.Confidence)
	}
}

// The default policy's signal groups take the fitted weights when a policy
// gives {}, and a given weight replaces only itself.
func TestDefaultSignalKnobs(t *testing.T) {
	doc := strings.Replace(minimalPolicy, `"similarity":{}`,
		`"similarity":{},"answer_coverage":{},"chunk_relevance":{"both":2}`, 1)
	p, err := DecodePolicy([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if *p.AnswerCoverage != defaultAnswerCoverage() {
		t.Errorf("answer_coverage defaults: %+v", *p.AnswerCoverage)
	}
	want := defaultChunkRelevance()
	want.Both = 2
	if *p.ChunkRelevance != want {
		t.Errorf("chunk_relevance: %+v want %+v", *p.ChunkRelevance, want)
	}
	if len(p.OrderBy) != 1 || p.OrderBy[0] != OrderRetrieval {
		t.Errorf("order_by default: %v", p.OrderBy)
	}
	def, _ := DecodePolicy(policies.Default())
	if got := strings.Join(def.OrderBy, ","); got != "chunk_relevance,answer_coverage" {
		t.Errorf("default order_by: %s", got)
	}
	if !def.Filters.HasRelevanceMin || def.Filters.RelevanceMin != 0.35 || def.Confidence.Signal != SigAnswerability {
		t.Errorf("default policy is not the proposal: %+v %+v", def.Filters, def.Confidence)
	}
	if *def.AnswerCoverage != defaultAnswerCoverage() || *def.ChunkRelevance != defaultChunkRelevance() {
		t.Errorf("default.json and the built-in defaults disagree")
	}
}

// signals.answerability: a text model is required, weights name features,
// and every number is range-checked, naming the field.
func TestAnswerabilityPolicy(t *testing.T) {
	base := `{"name":"p","version":"1","signals":{"answer_coverage":{},"answerability":%s},
 "confidence":{"signal":"answerability"},
 "bands":[{"min":0.5,"label":"OK","level":"sufficient","action":"inject"},{"min":0,"label":"NO","level":"insufficient","action":"refuse"}]}`
	for _, c := range []struct{ name, doc, field string }{
		{"no text model", `{}`, "signals.answerability.text"},
		{"unknown feature", `{"text":{"bias":0,"weights":{"vibes":1}}}`, "signals.answerability.text.weights.vibes"},
		{"weight out of range", `{"text":{"bias":0,"weights":{"answer_coverage":101}}}`, "signals.answerability.text.weights.answer_coverage"},
		{"bias out of range", `{"text":{"bias":-200,"weights":{}}}`, "signals.answerability.text.bias"},
		{"floor out of range", `{"text":{"weights":{}},"scored_min_term_coverage":2}`, "signals.answerability.scored_min_term_coverage"},
		{"saturation", `{"text":{"weights":{}},"sparse_saturation":0}`, "signals.answerability.sparse_saturation"},
		{"unknown key", `{"text":{"weights":{}},"clip":1}`, "signals.answerability.clip"},
	} {
		_, err := NewEngine([]byte(strings.Replace(base, "%s", c.doc, 1)))
		e, ok := err.(*Error)
		if !ok || e.Code != CodeBadPolicy || e.Field != c.field {
			t.Errorf("%s: got %v, want bad_policy at %s", c.name, err, c.field)
		}
	}
	noCoverage := strings.Replace(strings.Replace(base, "%s", `{"text":{"weights":{}}}`, 1), `"answer_coverage":{},`, "", 1)
	if _, err := NewEngine([]byte(noCoverage)); err == nil || err.(*Error).Field != "signals.answerability" {
		t.Errorf("answerability without answer_coverage: %v", err)
	}
	ok := strings.Replace(base, "%s", `{"text":{"bias":-1,"weights":{"answer_coverage":2,"top_vector":0}},"scored":{"bias":0,"weights":{"retriever_agreement":1}}}`, 1)
	e, err := NewEngine([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	a := e.Policy().Answerability
	if !a.HasScored || !a.Text.Used[featTopVector] || a.Text.Used[featTopBM25] || a.BM25Saturation != 10 || a.SparseSaturation != 1 {
		t.Errorf("decoded %+v", a)
	}
}
