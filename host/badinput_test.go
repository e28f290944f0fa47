package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/policies"
)

// Every class of bad value and every input limit, natively and through both
// modules: the same error JSON naming the field (or, where docs/security.md
// lists a rule instead of an error, the same decision), no trap, and the
// instance kept. docs/security.md's table points here by case name.

// smallLimitsPolicy is the default policy with every limit small enough to
// hit with a short request.
func smallLimitsPolicy(t testing.TB) []byte {
	t.Helper()
	pj, _ := policies.Get("default")
	var p map[string]any
	if err := json.Unmarshal(pj, &p); err != nil {
		t.Fatal(err)
	}
	p["name"] = "small-limits"
	p["limits"] = map[string]int{
		"max_request_bytes": 2000, "max_chunks": 3, "max_queries": 2, "max_chunk_bytes": 100,
		"max_total_bytes": 250, "max_query_bytes": 40, "max_embedding_dims": 4, "max_depth": 8,
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type badCase struct {
	name  string
	body  string
	code  string // "" when the input is accepted under a documented rule
	field string
	msg   string // a substring of the message (the limit's name for limits)
}

func chunksBody(chunks ...string) string {
	return `{"query":"reset password","chunks":[` + strings.Join(chunks, ",") + `]}`
}

var badValueCases = []badCase{
	// NaN and Inf cannot be written in JSON; the nearest a client can get.
	{"NaN literal", chunksBody(`{"scores":{"vector":NaN}}`), "bad_json", "", "invalid JSON"},
	{"Infinity literal", chunksBody(`{"scores":{"bm25":Infinity}}`), "bad_json", "", "invalid JSON"},
	{"NaN as a string", chunksBody(`{"scores":{"vector":"NaN"}}`), "bad_field", "chunks[0].scores.vector", "must be a number"},
	{"huge exponent overflows", chunksBody(`{"scores":{"bm25":1e400}}`), "bad_json", "", "overflows float64"},
	{"huge negative exponent overflows", chunksBody(`{"scores":{"rerank":-1e400}}`), "bad_json", "", "overflows float64"},
	{"largest finite number is a number", chunksBody(`{"scores":{"bm25":1.7976931348623157e308,"rerank":-1.7976931348623157e308}}`), "", "", ""},
	{"underflow is zero", chunksBody(`{"scores":{"vector":1e-400}}`), "", "", ""},
	{"vector above 1", chunksBody(`{"scores":{"vector":1.5}}`), "bad_field", "chunks[0].scores.vector", "1.5 is not a cosine similarity; set vector_metric to cosine_distance, l2 or l2_squared"},
	{"vector as a dot product", chunksBody(`{"scores":{"vector":87}}`), "bad_field", "chunks[0].scores.vector", "87 is not a cosine similarity; set vector_metric to dot"},
	{"a dot product stated", `{"query":"reset password","vector_metric":"dot","chunks":[{"scores":{"vector":87}}]}`, "", "", ""},
	{"unknown vector_metric", `{"query":"reset password","vector_metric":"ip"}`, "bad_field", "vector_metric", "must be one of cosine, dot, l2, l2_squared, cosine_distance, negative_dot"},
	{"a distance below 0", `{"query":"reset password","vector_metric":"l2","chunks":[{"scores":{"vector":-0.5}}]}`, "bad_field", "chunks[0].scores.vector", "-0.5 is not an l2 distance"},
	{"a logit as a probability", `{"query":"reset password","rerank_scale":"probability","chunks":[{"scores":{"rerank":3.2}}]}`, "bad_field", "chunks[0].scores.rerank", "3.2 is not a probability; set rerank_scale to logit"},
	{"negative vector clamps to 0", chunksBody(`{"scores":{"vector":-0.4}}`), "", "", ""},
	{"vector below -1", chunksBody(`{"scores":{"vector":-1.5}}`), "bad_field", "chunks[0].scores.vector", "cosine"},
	{"negative bm25", chunksBody(`{"scores":{"bm25":-1}}`), "bad_field", "chunks[0].scores.bm25", "must be >= 0"},
	{"negative rrf", chunksBody(`{},{"scores":{"rrf":-0.01}}`), "bad_field", "chunks[1].scores.rrf", "must be >= 0"},
	{"negative rerank is a logit", chunksBody(`{"scores":{"rerank":-7.5,"vector":0.5}}`), "", "", ""},
	{"trust above 1", chunksBody(`{"trust":2}`), "bad_field", "chunks[0].trust", "must be in [0, 1]"},
	{"missing id numbered by position", chunksBody(`{"text":"a","scores":{"vector":0.5}}`), "", "", ""},
	{"empty id", chunksBody(`{"id":""}`), "bad_field", "chunks[0].id", "must not be empty"},
	{"duplicate id", chunksBody(`{"id":"a"},{"id":"a"}`), "bad_field", "chunks[1].id", `duplicate id "a"`},
	{"auto id collides", chunksBody(`{"id":"c2"},{}`), "bad_field", "chunks[1].id", `duplicate id "c2"`},
	{"invalid UTF-8 in query", "{\"query\":\"\xff\xfe\"}", "bad_json", "", "invalid UTF-8"},
	{"invalid UTF-8 in text", chunksBody("{\"text\":\"ok \xc3\x28\"}"), "bad_json", "", "invalid UTF-8"},
	{"lone surrogate", `{"query":"\ud800"}`, "bad_json", "", "surrogate"},
	{"empty query", `{"query":""}`, "bad_field", "query", "must not be empty"},
	{"blank query", `{"query":"  \n\t "}`, "bad_field", "query", "must not be empty"},
	{"missing query", `{"chunks":[]}`, "bad_field", "query", "is required"},
	{"empty body", ``, "bad_json", "", "empty request"},
	{"not an object", `[{"query":"q"}]`, "bad_json", "", "must be a JSON object"},
	{"unknown field", `{"query":"q","prompt":"x"}`, "bad_field", "prompt", "unknown field"},
	{"duplicate key", `{"query":"a","query":"b"}`, "bad_json", "", "duplicate key"},
	{"embedding wrong length", `{"query":"q","query_embedding":[1,0,0],"chunks":[{"embedding":[1,0]}]}`, "bad_field", "chunks[0].embedding", "has 2 dimensions but query_embedding has 3"},
	{"embeddings differ", chunksBody(`{"embedding":[1,0]},{"embedding":[1]}`), "bad_field", "chunks[1].embedding", "dimensions"},
	{"empty embedding", `{"query":"q","query_embedding":[]}`, "bad_field", "query_embedding", "must not be empty"},
	{"bad time", chunksBody(`{"updated_at":"yesterday"}`), "bad_field", "chunks[0].updated_at", "RFC 3339"},
}

// limitCases run under smallLimitsPolicy; each names its limit.
func limitCases() []badCase {
	text := func(n int) string { return strings.Repeat("a", n) }
	return []badCase{
		{"max_request_bytes", `{"query":"q","chunks":[` + strings.Repeat(`{"text":""},`, 200) + `{}]}`, "limit", "", "(max_request_bytes)"},
		{"max_depth", chunksBody(`{"metadata":{"a":{"b":{"c":{"d":{"e":[1]}}}}}}`), "limit", "", "nesting deeper than 8 levels"},
		{"max_depth, deeply nested JSON", strings.Repeat("[", 900) + strings.Repeat("]", 900), "limit", "", "nesting deeper than 8 levels"},
		{"max_query_bytes", `{"query":"` + text(41) + `"}`, "limit", "query", "(max_query_bytes)"},
		{"max_chunks", chunksBody(`{}`, `{}`, `{}`, `{}`), "limit", "chunks", "(max_chunks)"},
		{"max_chunks per phrasing", `{"query":"q","results_per_query":[[{},{},{},{}]]}`, "limit", "results_per_query[0]", "(max_chunks)"},
		{"max_queries", `{"query":"q","results_per_query":[[],[],[]]}`, "limit", "results_per_query", "(max_queries)"},
		{"max_chunk_bytes", chunksBody(`{"text":"` + text(101) + `"}`), "limit", "chunks[0].text", "(max_chunk_bytes)"},
		{"max_total_bytes", chunksBody(`{"text":"`+text(100)+`"}`, `{"text":"`+text(100)+`"}`, `{"text":"`+text(51)+`"}`), "limit", "chunks[2].text", "(max_total_bytes)"},
		{"max_embedding_dims", `{"query":"q","query_embedding":[1,2,3,4,5]}`, "limit", "query_embedding", "(max_embedding_dims)"},
		{"max_embedding_dims on a chunk", chunksBody(`{"embedding":[1,2,3,4,5]}`), "limit", "chunks[0].embedding", "(max_embedding_dims)"},
		{"within every limit", chunksBody(`{"text":"`+text(100)+`","scores":{"vector":0.7}}`, `{"text":"`+text(100)+`","embedding":[1,2,3,4]}`), "", "", ""},
	}
}

func TestBadValues(t *testing.T) {
	runBadCases(t, newPair(t, nil), badValueCases)
}

func TestLimits(t *testing.T) {
	runBadCases(t, newPair(t, smallLimitsPolicy(t)), limitCases())
}

func runBadCases(t *testing.T, p *pair, cases []badCase) {
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := p.same(t, "evaluate", func(e Evaluator) ([]byte, error) { return e.Evaluate(ctx, []byte(tc.body)) })
			if tc.code == "" {
				if err != nil {
					t.Fatalf("want a decision under the documented rule, got %v", err)
				}
				if bytes.Contains(out, []byte("NaN")) || bytes.Contains(out, []byte("Inf")) {
					t.Fatalf("non-finite number in the decision: %s", out)
				}
				return
			}
			var ge *GateError
			if !errors.As(err, &ge) {
				t.Fatalf("got %.100s, %v; want a %s error", out, err, tc.code)
			}
			if ge.Code != tc.code || ge.Field != tc.field || !strings.Contains(ge.Message, tc.msg) {
				t.Fatalf("got %s\nwant code %q field %q message containing %q", ge.JSON, tc.code, tc.field, tc.msg)
			}
		})
	}
	// No bad input replaced an instance (same checks it per call); the
	// modules still decide a good request.
	for _, g := range p.modules {
		if _, err := g.Evaluate(ctx, []byte(sampleRequest)); err != nil && !strings.Contains(err.Error(), "limit") {
			t.Fatalf("%s after the bad inputs: %v", g.Module(), err)
		}
	}
}

// Answer-validation input gets the same treatment.
func TestBadAnswers(t *testing.T) {
	cases := []badCase{
		{"answer not a string", `{"answer":3}`, "bad_answer", "answer", "must be a string"},
		{"missing answer", `{"tags":["S1"]}`, "bad_answer", "answer", "is required"},
		{"bad tag", `{"answer":"x","tags":["S0"]}`, "bad_answer", "tags[0]", "source tag"},
		{"duplicate tag", `{"answer":"x","tags":["S1","S1"]}`, "bad_answer", "tags[1]", "duplicate tag"},
		{"too many tags", `{"answer":"x","tags":["S1","S2","S3","S4"]}`, "limit", "tags", "(max_chunks)"},
		{"query over max_query_bytes", `{"answer":"x","query":"` + strings.Repeat("q", 41) + `"}`, "limit", "query", "(max_query_bytes)"},
		{"invalid UTF-8", "{\"answer\":\"\xff\"}", "bad_json", "", "invalid UTF-8"},
		{"unknown field", `{"answer":"x","sources":"y"}`, "bad_answer", "sources", "unknown field"},
		{"empty answer is validated", `{"answer":""}`, "", "", ""},
	}
	p := newPair(t, smallLimitsPolicy(t))
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.same(t, "validate", func(e Evaluator) ([]byte, error) { return e.Validate(ctx, []byte(tc.body)) })
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ge *GateError
			if !errors.As(err, &ge) || ge.Code != tc.code || ge.Field != tc.field || !strings.Contains(ge.Message, tc.msg) {
				t.Fatalf("got %v\nwant code %q field %q message containing %q", err, tc.code, tc.field, tc.msg)
			}
		})
	}
}

// Huge JSON: a body over the host's input cap is refused before it reaches
// a guest; one under it but over the policy's max_request_bytes is refused
// by the guest, before parsing; neither costs an instance. (A body just
// under max_request_bytes made of tiny values is TestLargeJSONWithinDeadline's
// known issue.)
func TestHugeJSON(t *testing.T) {
	ctx := context.Background()
	for _, m := range realModules {
		t.Run(m.String(), func(t *testing.T) {
			g := newRealGate(t, m, Options{PoolSize: 1, Timeout: 10 * time.Second})
			over := make([]byte, DefaultMaxInputBytes+1)
			_, err := g.Evaluate(ctx, over)
			var ge *GateError
			if !errors.As(err, &ge) || ge.Code != "limit" || ge.Status() != 413 {
				t.Fatalf("over the host cap: %v", err)
			}
			// 5 MiB of numbers: over the default 4 MiB max_request_bytes.
			huge := []byte(`{"query":"q","query_embedding":[` + strings.Repeat("0,", 5<<19) + `0]}`)
			_, err = g.Evaluate(ctx, huge)
			if !errors.As(err, &ge) || ge.Code != "limit" || !strings.Contains(ge.Message, "max_request_bytes") {
				t.Fatalf("over max_request_bytes: %v", err)
			}
			if _, err := g.Evaluate(ctx, []byte(sampleRequest)); err != nil {
				t.Fatalf("next call: %v", err)
			}
			if s := g.Stats(); s.Discarded != 0 || s.Created != 1 {
				t.Fatalf("huge input cost an instance: %+v", s)
			}
		})
	}
}
