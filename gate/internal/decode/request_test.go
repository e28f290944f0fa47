package decode

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/wire"
)

func TestDecodeRequestFull(t *testing.T) {
	in := `{
	  "query": "  How do plants make food?\n",
	  "query_embedding": [0.1, -0.2, 0.3],
	  "now": "2024-05-01T12:00:00Z",
	  "vector_metric": "cosine",
	  "rerank_scale": "logit",
	  "chunks": [
	    {"id": "a", "doc_id": "d1", "title": "Photosynthesis", "text": "Plants use light.",
	     "scores": {"vector": 0.82, "bm25": 0, "rerank": -3.5, "rrf": 0.016, "boosted": 0.9, "graph": 2, "sparse": 2.5e6},
	     "updated_at": "2024-04-30T12:00:00+00:00", "trust": 0.5, "untrusted": true,
	     "embedding": [1, 0, 0], "temperature": 37, "metadata": {"any": ["thing", {"deep": null}]}},
	    {"text": "second, no id", "scores": {"vector": -0.3}},
	    {"id": "c", "scores": {"vector": 1.0000000005}, "title": null}
	  ],
	  "results_per_query": [[{"id": "x", "scores": {"vector": 0.5}}], [{"id": "x"}, {}]]
	}`
	req, err := DecodeRequest([]byte(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if req.Query != "How do plants make food?" {
		t.Errorf("query not trimmed: %q", req.Query)
	}
	if len(req.QueryEmbedding) != 3 || req.QueryEmbedding[1] != -0.2 {
		t.Errorf("query_embedding %v", req.QueryEmbedding)
	}
	if !req.HasNow || req.Now != "2024-05-01T12:00:00Z" || req.NowSec != 1714564800 {
		t.Errorf("now: %v %q %d", req.HasNow, req.Now, req.NowSec)
	}
	if req.VectorMetric != "cosine" || req.RerankScale != "logit" {
		t.Errorf("vector_metric %q, rerank_scale %q", req.VectorMetric, req.RerankScale)
	}
	if len(req.Chunks) != 3 {
		t.Fatalf("chunks: %d", len(req.Chunks))
	}
	c := req.Chunks[0]
	want := Chunk{ID: "a", DocID: "d1", Title: "Photosynthesis", Text: "Plants use light.",
		Scores: Scores{Vector: 0.82, BM25: 0, Rerank: -3.5, RRF: 0.016, Boosted: 0.9, Graph: 2, Sparse: 2.5e6,
			HasVector: true, HasBM25: true, HasRerank: true, HasRRF: true, HasBoosted: true, HasGraph: true, HasSparse: true},
		UpdatedAt: "2024-04-30T12:00:00+00:00", UpdatedSec: 1714478400, HasUpdated: true,
		Trust: 0.5, HasTrust: true, Untrusted: true, Temperature: 37, HasTemperature: true}
	emb := c.Embedding
	c.Embedding = nil
	if !reflect.DeepEqual(c, want) || len(emb) != 3 || emb[0] != 1 {
		t.Errorf("chunk 0 =\n%+v\nwant\n%+v (embedding %v)", c, want, emb)
	}
	// A present 0 is a score; an absent one is not.
	c1 := req.Chunks[1]
	if c1.ID != "c2" || !c1.Scores.HasVector || c1.Scores.HasBM25 || c1.HasTrust || c1.HasUpdated || c1.HasTemperature {
		t.Errorf("chunk 1 = %+v", c1)
	}
	// Vector scores are kept as given: the engine reads them by the metric.
	if c1 := req.Chunks[1]; c1.Scores.Vector != -0.3 {
		t.Errorf("negative vector score changed: %+v", c1)
	}
	if c2 := req.Chunks[2]; c2.Scores.Vector != 1.0000000005 || c2.Title != "" {
		t.Errorf("vector score changed: %+v", c2)
	}
	if len(req.ResultsPerQuery) != 2 || len(req.ResultsPerQuery[1]) != 2 || req.ResultsPerQuery[1][0].ID != "x" || req.ResultsPerQuery[1][1].ID != "c2" {
		t.Errorf("results_per_query = %+v", req.ResultsPerQuery)
	}
}

func TestDecodeRequestMinimal(t *testing.T) {
	req, err := DecodeRequest([]byte(`{"query":"q"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if req.Query != "q" || req.Chunks != nil || req.ResultsPerQuery != nil || req.HasNow || req.QueryEmbedding != nil {
		t.Errorf("minimal request = %+v", req)
	}
	req, err = DecodeRequest([]byte(`{"query":"q","chunks":[]}`), nil)
	if err != nil || len(req.Chunks) != 0 {
		t.Errorf("empty chunks: %+v %v", req, err)
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	small := &Limits{MaxRequestBytes: 400, MaxChunks: 2, MaxQueries: 2, MaxChunkBytes: 10, MaxTotalBytes: 15,
		MaxQueryBytes: 12, MaxEmbeddingDims: 3, MaxDepth: 6}
	chunk := func(s string) string { return `{"query":"q","chunks":[` + s + `]}` }
	tests := []struct {
		name, in    string
		lim         *Limits
		code, field string
		msg         string // substring
	}{
		{"empty body", ``, nil, CodeBadJSON, "", "empty request"},
		{"blank body", " \n\t", nil, CodeBadJSON, "", "empty request"},
		{"not json", `{"query":}`, nil, CodeBadJSON, "", "invalid JSON at offset 9"},
		{"trailing garbage", `{"query":"q"} {}`, nil, CodeBadJSON, "", "offset 14"},
		{"top-level array", `[{"query":"q"}]`, nil, CodeBadJSON, "", "must be a JSON object, not an array"},
		{"top-level string", `"q"`, nil, CodeBadJSON, "", "not a string"},
		{"duplicate key", `{"query":"a","query":"b"}`, nil, CodeBadJSON, "", "duplicate key \"query\""},
		{"invalid utf8", "{\"query\":\"\xff\"}", nil, CodeBadJSON, "", "invalid UTF-8"},
		{"lone surrogate", `{"query":"\ud800"}`, nil, CodeBadJSON, "", "surrogate"},
		{"number overflow", chunk(`{"scores":{"bm25":1e400}}`), nil, CodeBadJSON, "", "overflows float64"},
		{"unknown top field", `{"query":"q","chunk":[]}`, nil, CodeBadField, "chunk", "unknown field"},
		{"top metadata not allowed", `{"query":"q","metadata":{}}`, nil, CodeBadField, "metadata", "unknown field"},
		{"unknown chunk field", chunk(`{"id":"a","score":0.5}`), nil, CodeBadField, "chunks[0].score", "unknown field"},
		{"unknown score field", chunk(`{},{"scores":{"vector":0.5,"cosine":0.5}}`), nil, CodeBadField, "chunks[1].scores.cosine", "unknown field"},
		{"missing query", `{"chunks":[]}`, nil, CodeBadField, "query", "is required"},
		{"null query", `{"query":null}`, nil, CodeBadField, "query", "is required"},
		{"query not string", `{"query":5}`, nil, CodeBadField, "query", "must be a string"},
		{"empty query", `{"query":""}`, nil, CodeBadField, "query", "must not be empty"},
		{"blank query", `{"query":" \t\n\u3000"}`, nil, CodeBadField, "query", "must not be empty"},
		{"zero-width query", `{"query":"\u200b\u200c\u200d\u2060\ufeff"}`, nil, CodeBadField, "query", "must not be empty"},
		{"NUL query", `{"query":"\u0000\u0000"}`, nil, CodeBadField, "query", "must not be empty"},
		{"control and zero-width query", `{"query":" \u0001\u200b\u007f\u0085 "}`, nil, CodeBadField, "query", "must not be empty"},
		{"chunks not array", `{"query":"q","chunks":{}}`, nil, CodeBadField, "chunks", "must be an array"},
		{"chunk not object", chunk(`"text"`), nil, CodeBadField, "chunks[0]", "must be an object"},
		{"id not string", chunk(`{"id":7}`), nil, CodeBadField, "chunks[0].id", "must be a string"},
		{"empty id", chunk(`{"id":""}`), nil, CodeBadField, "chunks[0].id", "must not be empty"},
		{"duplicate id", chunk(`{"id":"a"},{"id":"b"},{"id":"a"}`), nil, CodeBadField, "chunks[2].id", `duplicate id "a" (first used by chunks[0])`},
		{"auto id collides", chunk(`{"id":"c2"},{}`), nil, CodeBadField, "chunks[1].id", `duplicate id "c2"`},
		{"text not string", chunk(`{"text":["a"]}`), nil, CodeBadField, "chunks[0].text", "must be a string"},
		{"scores not object", chunk(`{"scores":0.5}`), nil, CodeBadField, "chunks[0].scores", "must be an object"},
		{"vector not number", chunk(`{"scores":{"vector":"0.5"}}`), nil, CodeBadField, "chunks[0].scores.vector", "must be a number"},
		{"vector_metric not string", `{"query":"q","vector_metric":2}`, nil, CodeBadField, "vector_metric", "must be a string"},
		{"rerank_scale not string", `{"query":"q","rerank_scale":["logit"]}`, nil, CodeBadField, "rerank_scale", "must be a string"},
		{"negative bm25", chunk(`{"scores":{"bm25":-0.1}}`), nil, CodeBadField, "chunks[0].scores.bm25", "must be >= 0"},
		{"negative rrf", chunk(`{"scores":{"rrf":-1}}`), nil, CodeBadField, "chunks[0].scores.rrf", "must be >= 0"},
		{"negative boosted", chunk(`{"scores":{"boosted":-1}}`), nil, CodeBadField, "chunks[0].scores.boosted", "must be >= 0"},
		{"negative graph", chunk(`{"scores":{"graph":-2}}`), nil, CodeBadField, "chunks[0].scores.graph", "must be >= 0"},
		{"negative sparse", chunk(`{"scores":{"sparse":-1}}`), nil, CodeBadField, "chunks[0].scores.sparse", "must be >= 0"},
		{"rerank not number", chunk(`{"scores":{"rerank":true}}`), nil, CodeBadField, "chunks[0].scores.rerank", "must be a number"},
		{"trust above 1", chunk(`{"trust":1.5}`), nil, CodeBadField, "chunks[0].trust", "must be in [0, 1]"},
		{"trust negative", chunk(`{"trust":-0.1}`), nil, CodeBadField, "chunks[0].trust", "must be in [0, 1]"},
		{"untrusted not bool", chunk(`{"untrusted":"yes"}`), nil, CodeBadField, "chunks[0].untrusted", "must be true or false"},
		{"temperature not number", chunk(`{"temperature":"hot"}`), nil, CodeBadField, "chunks[0].temperature", "must be a number"},
		{"bad updated_at", chunk(`{"updated_at":"yesterday"}`), nil, CodeBadField, "chunks[0].updated_at", "RFC 3339"},
		{"updated_at no zone", chunk(`{"updated_at":"2024-05-01T12:00:00"}`), nil, CodeBadField, "chunks[0].updated_at", "time zone offset"},
		{"impossible date", `{"query":"q","now":"2023-02-29T00:00:00Z"}`, nil, CodeBadField, "now", "not a valid date"},
		{"now not string", `{"query":"q","now":1714564800}`, nil, CodeBadField, "now", "must be a string"},
		{"query_embedding not numbers", `{"query":"q","query_embedding":[1,"2"]}`, nil, CodeBadField, "query_embedding[1]", "must be a number"},
		{"empty query_embedding", `{"query":"q","query_embedding":[]}`, nil, CodeBadField, "query_embedding", "must not be empty"},
		{"empty chunk embedding", chunk(`{"embedding":[]}`), nil, CodeBadField, "chunks[0].embedding", "must not be empty"},
		{"embedding length vs query", `{"query":"q","query_embedding":[1,2],"chunks":[{"embedding":[1,2,3]}]}`, nil, CodeBadField, "chunks[0].embedding", "has 3 dimensions but query_embedding has 2"},
		{"embedding lengths differ", chunk(`{"embedding":[1,2]},{"embedding":[1]}`), nil, CodeBadField, "chunks[1].embedding", "has 1 dimensions but chunks[0].embedding has 2"},
		{"embedding element", chunk(`{"embedding":[1,null]}`), nil, CodeBadField, "chunks[0].embedding[1]", "must be a number"},
		{"rpq not array", `{"query":"q","results_per_query":{}}`, nil, CodeBadField, "results_per_query", "must be an array"},
		{"rpq list not array", `{"query":"q","results_per_query":[[],{}]}`, nil, CodeBadField, "results_per_query[1]", "must be an array"},
		{"rpq duplicate id", `{"query":"q","results_per_query":[[{"id":"a"}],[{"id":"b"},{"id":"b"}]]}`, nil, CodeBadField, "results_per_query[1][1].id", "first used by results_per_query[1][0]"},
		{"rpq bad score", `{"query":"q","results_per_query":[[{"scores":{"vector":"2"}}]]}`, nil, CodeBadField, "results_per_query[0][0].scores.vector", "must be a number"},

		{"limit request bytes", `{"query":"q","chunks":[` + strings.Repeat(`{},`, 200) + `{}]}`, small, CodeLimit, "", "(max_request_bytes)"},
		{"limit depth", chunk(`{"metadata":{"a":{"b":{"c":[1]}}}}`), small, CodeLimit, "", "nesting deeper than 6 levels"},
		{"limit query bytes", `{"query":"0123456789abc"}`, small, CodeLimit, "query", "is 13 bytes; the limit is 12 (max_query_bytes)"},
		{"limit chunks", chunk(`{},{},{}`), small, CodeLimit, "chunks", "has 3 chunks; the limit is 2 (max_chunks)"},
		{"limit queries", `{"query":"q","results_per_query":[[],[],[]]}`, small, CodeLimit, "results_per_query", "(max_queries)"},
		{"limit chunks per query", `{"query":"q","results_per_query":[[],[{},{},{}]]}`, small, CodeLimit, "results_per_query[1]", "(max_chunks)"},
		{"limit chunk text", chunk(`{"text":"01234567890"}`), small, CodeLimit, "chunks[0].text", "is 11 bytes; the limit is 10 (max_chunk_bytes)"},
		{"limit total text", chunk(`{"text":"0123456789"},{"text":"012345"}`), small, CodeLimit, "chunks[1].text", "16 bytes; the limit is 15 (max_total_bytes)"},
		{"limit total text across lists", `{"query":"q","chunks":[{"text":"0123456789"}],"results_per_query":[[{"text":"abcdef"}]]}`, small, CodeLimit, "results_per_query[0][0].text", "(max_total_bytes)"},
		{"limit query dims", `{"query":"q","query_embedding":[1,2,3,4]}`, small, CodeLimit, "query_embedding", "has 4 dimensions; the limit is 3"},
		{"limit chunk dims", chunk(`{"embedding":[1,2,3,4]}`), small, CodeLimit, "chunks[0].embedding", "(max_embedding_dims)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := DecodeRequest([]byte(tc.in), tc.lim)
			if err == nil {
				t.Fatalf("decoded %+v, want error", req)
			}
			if req != nil {
				t.Errorf("request returned with error")
			}
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("error %T %v, want *Error", err, err)
			}
			if e.Code != tc.code || e.Field != tc.field || !strings.Contains(e.Message, tc.msg) {
				t.Errorf("got %s %q %q, want %s %q containing %q", e.Code, e.Field, e.Message, tc.code, tc.field, tc.msg)
			}
		})
	}
}

// Vector and rerank scores are kept as given: what they may be depends on
// the request's vector_metric and rerank_scale, which the engine reads
// (gate/metric.go).
func TestDecodeRequestKeepsScores(t *testing.T) {
	tests := []struct {
		vector string
		want   float64
	}{
		{"-1", -1}, {"-0.2", -0.2}, {"0", 0}, {"0.5", 0.5}, {"1.000000001", 1.000000001}, {"101.9", 101.9}, {"-3e5", -3e5},
	}
	for _, tc := range tests {
		req, err := DecodeRequest([]byte(`{"query":"q","chunks":[{"scores":{"vector":`+tc.vector+`}}]}`), nil)
		if err != nil {
			t.Fatalf("vector %s: %v", tc.vector, err)
		}
		if v := req.Chunks[0].Scores.Vector; v != tc.want || !req.Chunks[0].Scores.HasVector {
			t.Errorf("vector %s decoded as %v, want %v", tc.vector, v, tc.want)
		}
	}
	// rerank keeps any finite value, including large logits.
	req, err := DecodeRequest([]byte(`{"query":"q","chunks":[{"scores":{"rerank":-1e300}}]}`), nil)
	if err != nil || req.Chunks[0].Scores.Rerank != -1e300 {
		t.Errorf("rerank: %v %v", req, err)
	}
}

func TestDecodeRequestLimitsExact(t *testing.T) {
	// Exactly at every limit is accepted; defaults apply to zero fields.
	lim := &Limits{MaxChunks: 3, MaxChunkBytes: 4, MaxTotalBytes: 12, MaxQueryBytes: 5, MaxEmbeddingDims: 2}
	in := `{"query":"abcde","query_embedding":[1,2],"chunks":[{"text":"abcd","embedding":[0,1]},{"text":"abcd"},{"text":"abcd"}]}`
	if _, err := DecodeRequest([]byte(in), lim); err != nil {
		t.Fatalf("at the limits: %v", err)
	}
	if _, err := DecodeRequest([]byte(in), &Limits{MaxRequestBytes: len(in)}); err != nil {
		t.Fatalf("request exactly max_request_bytes: %v", err)
	}
	if _, err := DecodeRequest([]byte(in), &Limits{MaxRequestBytes: len(in) - 1}); err == nil {
		t.Fatal("one byte over max_request_bytes accepted")
	}
	d := DefaultLimits()
	if r := (&Limits{MaxChunks: 7, MaxDepth: -1}).Resolved(); r.MaxChunks != 7 || r.MaxDepth != d.MaxDepth || r.MaxRequestBytes != d.MaxRequestBytes {
		t.Errorf("resolved = %+v", r)
	}
	if r := (*Limits)(nil).Resolved(); r != d {
		t.Errorf("nil limits = %+v", r)
	}
}

func TestDecodeRequestManyChunksDuplicate(t *testing.T) {
	// Over 32 chunks the duplicate check uses a map; it must still find the
	// first duplicate and name both positions.
	var b strings.Builder
	b.WriteString(`{"query":"q","chunks":[`)
	for i := 0; i < 100; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		id := "id" + strconv.Itoa(i)
		if i == 70 {
			id = "id41"
		}
		b.WriteString(`{"id":"` + id + `"}`)
	}
	b.WriteString("]}")
	_, err := DecodeRequest([]byte(b.String()), nil)
	e, _ := err.(*Error)
	if e == nil || e.Field != "chunks[70].id" || !strings.Contains(e.Message, "first used by chunks[41]") {
		t.Errorf("got %v", err)
	}
}

// DecodeRequestInPlace decides exactly like DecodeRequest, on good and bad input.
func TestDecodeRequestInPlaceMatches(t *testing.T) {
	for _, in := range []string{
		string(benchRequest(5)),
		`{"query":" q\u00e9 ","chunks":[{"text":"a\nb \"c\"","scores":{"vector":-0.5}}]}`,
		`{"query":"q","chunks":[{"id":"a"},{"id":"a"}]}`,
		`{"query":"q",}`,
	} {
		r1, e1 := DecodeRequest([]byte(in), nil)
		r2, e2 := DecodeRequestInPlace([]byte(in), nil)
		if !reflect.DeepEqual(r1, r2) || !reflect.DeepEqual(e1, e2) {
			t.Errorf("in place differs for %.60s:\n%+v %v\n%+v %v", in, r1, e1, r2, e2)
		}
	}
}

// A hostile request of tiny values is refused by the value budget before it
// becomes a huge tree; the same budget admits a realistic request with
// embeddings.
func TestDecodeRequestValueBudget(t *testing.T) {
	lim := &Limits{MaxRequestBytes: 40000}
	hostile := `{"query":"q","chunks":[{"metadata":[` + strings.Repeat("0,", 15000) + `0]}]}`
	_, err := DecodeRequest([]byte(hostile), lim)
	if e, _ := err.(*Error); e == nil || e.Code != CodeLimit || e.Field != "" || !strings.Contains(e.Message, "more than 6024 values") {
		t.Errorf("hostile request: %v", err)
	}
	var b strings.Builder
	b.WriteString(`{"query":"q","query_embedding":[`)
	for i := 0; i < 3072; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("0.0123456")
	}
	b.WriteString(`]}`)
	if _, err := DecodeRequest([]byte(b.String()), nil); err != nil {
		t.Errorf("3072-dim embedding: %v", err)
	}
}

func TestDecodeAnswerValueBudget(t *testing.T) {
	in := `{"answer":"x","tags":[` + strings.Repeat(`"S1",`, 50) + `"S1"]}`
	_, err := DecodeAnswer([]byte(in), &Limits{MaxChunks: 10})
	if e, _ := err.(*Error); e == nil || e.Code != CodeLimit || !strings.Contains(e.Message, "more than 18 values") {
		t.Errorf("got %v", err)
	}
}

// The decoders keep any vector_metric and rerank_scale string: the engine
// checks the names, so that a Go caller's Request gets the same error. A
// known name is its constant; "" is the default, as absent.
func TestDecodeScoreConventions(t *testing.T) {
	for _, c := range []struct {
		in     string
		metric wire.VectorMetric
		scale  wire.RerankScale
	}{
		{`{"query":"q","vector_metric":"l2_squared","rerank_scale":"probability"}`, wire.MetricL2Squared, wire.RerankProbability},
		{`{"query":"q","vector_metric":"negative_dot"}`, wire.MetricNegativeDot, ""},
		{`{"query":"q","vector_metric":"Euclid","rerank_scale":"odds"}`, "Euclid", "odds"},
		{`{"query":"q","vector_metric":"","rerank_scale":null}`, "", ""},
	} {
		for _, inPlace := range []bool{false, true} {
			var m Memory
			req, err := m.Decode([]byte(c.in), nil, inPlace)
			if err != nil {
				t.Fatalf("%s: %v", c.in, err)
			}
			if req.VectorMetric != c.metric || req.RerankScale != c.scale {
				t.Errorf("%s: %q %q, want %q %q", c.in, req.VectorMetric, req.RerankScale, c.metric, c.scale)
			}
		}
	}
}
