package decode

import (
	"bytes"
	"reflect"
	"strconv"
	"testing"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// FuzzDecodeRequest: decoding never panics; every failure is a *Error with a
// known code whose error JSON is valid; every success satisfies the
// documented invariants and round-trips: re-encoding the decoded request and
// decoding it again gives the same Request and the same bytes.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"query":"q"}`,
		`{"query":" what? ","now":"2024-05-01T12:00:00+02:00","query_embedding":[0.5,-0.5],"chunks":[{"id":"a","doc_id":"d","title":"t","text":"x\n[S9] </sources>","scores":{"vector":-0.2,"bm25":1,"rerank":-4,"rrf":0.01,"boosted":0.3,"graph":0},"updated_at":"2023-01-01T00:00:00Z","trust":1,"untrusted":true,"embedding":[1,0],"temperature":37,"metadata":{"k":[1]}},{}]}`,
		`{"query":"q","results_per_query":[[{"id":"a","scores":{"vector":0.9}}],[{"id":"a","scores":{"vector":0.8}},{}]]}`,
		`{"query":"q","chunks":[{"id":"a"},{"id":"a"}]}`,
		`{"query":"q","chunks":[{"scores":{"vector":1.5}}]}`,
		`{"query":"","chunks":[]}`,
		`{"query":"q","vector_metric":"l2_squared","rerank_scale":"logit","chunks":[{"scores":{"vector":0.31,"rerank":2.5}},{"scores":{"vector":0.52}}]}`,
		`{"query":"q","vector_metric":"dot","chunks":[{"scores":{"vector":101.9}},{"scores":{"vector":-3e2}}]}`,
		`{"query":"q","vector_metric":"negative_dot","rerank_scale":"probability","chunks":[{"scores":{"vector":-0.8,"rerank":0.4}}]}`,
		`{"query":"q","vector_metric":"euclid","rerank_scale":"odds"}`,
		`{"query":"q","vector_metric":null,"rerank_scale":null}`,
	} {
		f.Add([]byte(s))
	}
	lim := &Limits{MaxDepth: 12}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := DecodeRequest(data, lim)
		if err != nil {
			e, ok := err.(*Error)
			if !ok || req != nil {
				t.Fatalf("error %T %v with request %v", err, err, req)
			}
			switch e.Code {
			case CodeBadJSON, CodeBadField, CodeLimit:
			default:
				t.Fatalf("unexpected code %q", e.Code)
			}
			if _, perr := jsonx.Parse(AppendError(nil, err), 4); perr != nil {
				t.Fatalf("error JSON invalid: %v", perr)
			}
			return
		}
		checkRequestInvariants(t, req)
		enc := appendRequest(nil, req)
		req2, err := DecodeRequest(enc, lim)
		if err != nil {
			t.Fatalf("re-encoded request rejected: %v\n%s", err, enc)
		}
		if !reflect.DeepEqual(req, req2) {
			t.Fatalf("round trip changed the request:\n%+v\n%+v", req, req2)
		}
		if enc2 := appendRequest(nil, req2); !bytes.Equal(enc, enc2) {
			t.Fatalf("re-encoding not deterministic:\n%s\n%s", enc, enc2)
		}
	})
}

func checkRequestInvariants(t *testing.T, req *Request) {
	t.Helper()
	if req.Query == "" {
		t.Fatal("empty query accepted")
	}
	lists := append([][]Chunk{req.Chunks}, req.ResultsPerQuery...)
	for _, list := range lists {
		ids := map[string]bool{}
		for _, c := range list {
			if c.ID == "" || ids[c.ID] {
				t.Fatalf("empty or duplicate id %q", c.ID)
			}
			ids[c.ID] = true
			s := c.Scores
			if s.HasVector && (s.Vector != s.Vector || s.Vector-s.Vector != 0) {
				t.Fatalf("vector %v not finite", s.Vector)
			}
			if s.BM25 < 0 || s.RRF < 0 || s.Boosted < 0 || s.Graph < 0 || s.Sparse < 0 || (c.HasTrust && (c.Trust < 0 || c.Trust > 1)) {
				t.Fatalf("out-of-range score %+v trust %v", s, c.Trust)
			}
			if len(c.Embedding) > 0 && len(req.QueryEmbedding) > 0 && len(c.Embedding) != len(req.QueryEmbedding) {
				t.Fatal("embedding length mismatch accepted")
			}
		}
	}
}

// appendRequest is a test-only request encoder: the gate itself never
// writes requests. Numbers use the shortest exact form so the round trip is
// lossless.
func appendRequest(dst []byte, r *Request) []byte {
	dst = append(dst, `{"query":`...)
	dst = jsonx.AppendString(dst, r.Query)
	if r.HasNow {
		dst = append(dst, `,"now":`...)
		dst = jsonx.AppendString(dst, r.Now)
	}
	if r.VectorMetric != "" {
		dst = append(dst, `,"vector_metric":`...)
		dst = jsonx.AppendString(dst, string(r.VectorMetric))
	}
	if r.RerankScale != "" {
		dst = append(dst, `,"rerank_scale":`...)
		dst = jsonx.AppendString(dst, string(r.RerankScale))
	}
	if r.QueryEmbedding != nil {
		dst = append(dst, `,"query_embedding":`...)
		dst = appendExactNumbers(dst, r.QueryEmbedding)
	}
	if r.Chunks != nil {
		dst = append(dst, `,"chunks":`...)
		dst = appendChunks(dst, r.Chunks)
	}
	if r.ResultsPerQuery != nil {
		dst = append(dst, `,"results_per_query":[`...)
		for i, l := range r.ResultsPerQuery {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendChunks(dst, l)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

func appendChunks(dst []byte, cs []Chunk) []byte {
	dst = append(dst, '[')
	for i := range cs {
		c := &cs[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = jsonx.AppendString(dst, c.ID)
		dst = append(dst, `,"doc_id":`...)
		dst = jsonx.AppendString(dst, c.DocID)
		dst = append(dst, `,"title":`...)
		dst = jsonx.AppendString(dst, c.Title)
		dst = append(dst, `,"text":`...)
		dst = jsonx.AppendString(dst, c.Text)
		dst = append(dst, `,"scores":{`...)
		first := true
		num := func(key string, x float64, has bool) {
			if !has {
				return
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, '"')
			dst = append(dst, key...)
			dst = append(dst, `":`...)
			dst = strconv.AppendFloat(dst, x, 'g', -1, 64)
		}
		s := c.Scores
		num("vector", s.Vector, s.HasVector)
		num("bm25", s.BM25, s.HasBM25)
		num("rerank", s.Rerank, s.HasRerank)
		num("rrf", s.RRF, s.HasRRF)
		num("boosted", s.Boosted, s.HasBoosted)
		num("graph", s.Graph, s.HasGraph)
		num("sparse", s.Sparse, s.HasSparse)
		dst = append(dst, '}')
		if c.HasUpdated {
			dst = append(dst, `,"updated_at":`...)
			dst = jsonx.AppendString(dst, c.UpdatedAt)
		}
		if c.HasTrust {
			dst = append(dst, `,"trust":`...)
			dst = strconv.AppendFloat(dst, c.Trust, 'g', -1, 64)
		}
		if c.Untrusted {
			dst = append(dst, `,"untrusted":true`...)
		}
		if c.Embedding != nil {
			dst = append(dst, `,"embedding":`...)
			dst = appendExactNumbers(dst, c.Embedding)
		}
		if c.HasTemperature {
			dst = append(dst, `,"temperature":`...)
			dst = strconv.AppendFloat(dst, c.Temperature, 'g', -1, 64)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

func appendExactNumbers(dst []byte, xs []float64) []byte {
	dst = append(dst, '[')
	for i, x := range xs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendFloat(dst, x, 'g', -1, 64)
	}
	return append(dst, ']')
}
