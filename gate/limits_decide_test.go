package gate

import (
	"strings"
	"testing"
)

// A request built in Go meets the same limits, with the same error, as the
// same request sent as JSON.
func TestDecideAppliesLimits(t *testing.T) {
	policy := []byte(`{"name":"tight","version":"1","signals":{"similarity":{}},"confidence":{"signal":"max_similarity"},` +
		`"bands":[{"min":0.5,"label":"OK","level":"sufficient","action":"inject"},{"min":0,"label":"LOW","level":"insufficient","action":"refuse"}],` +
		`"limits":{"max_chunks":2,"max_chunk_bytes":20,"max_total_bytes":30,"max_query_bytes":10,"max_embedding_dims":2,"max_queries":1}}`)
	e, err := NewEngine(policy)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, json, field, limit string }{
		{"query", `{"query":"a query that is too long","chunks":[]}`, "query", "max_query_bytes"},
		{"chunks", `{"query":"q","chunks":[{"id":"a"},{"id":"b"},{"id":"c"}]}`, "chunks", "max_chunks"},
		{"chunk text", `{"query":"q","chunks":[{"id":"a","text":"twenty-one bytes long"}]}`, "chunks[0].text", "max_chunk_bytes"},
		{"total text", `{"query":"q","chunks":[{"id":"a","text":"sixteen bytes ok"},{"id":"b","text":"sixteen bytes ok"}]}`, "chunks[1].text", "max_total_bytes"},
		{"query embedding", `{"query":"q","query_embedding":[1,2,3],"chunks":[]}`, "query_embedding", "max_embedding_dims"},
		{"queries", `{"query":"q","results_per_query":[[],[]]}`, "results_per_query", "max_queries"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loose, err := DecodeRequest([]byte(c.json), &Limits{})
			if err != nil {
				t.Fatalf("decode with default limits: %v", err)
			}
			_, viaGo := e.Decide(loose)
			_, viaJSON := e.Evaluate([]byte(c.json))
			ge, ok1 := viaGo.(*Error)
			je, ok2 := viaJSON.(*Error)
			if !ok1 || !ok2 || ge.Code != CodeLimit || ge.Field != c.field || !strings.Contains(ge.Message, c.limit) {
				t.Fatalf("Decide: %v; Evaluate: %v", viaGo, viaJSON)
			}
			if *ge != *je {
				t.Fatalf("Decide and Evaluate disagree:\n  %+v\n  %+v", *ge, *je)
			}
		})
	}
}
