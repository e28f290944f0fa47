package server

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/policies"
)

// TestRecordGapEventMatchesCore: for every golden request whose decision is
// a gap, the event the server writes from its record of the decision (what
// a thumbs-down or a soft refusal logs) has exactly the bytes of the
// decision's own gap_event, given the same kind. Each request is also sent
// with its query padded with spaces and its embedding written with more
// digits than a decision keeps, which the server must not copy raw.
func TestRecordGapEventMatchesCore(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "requests", "*", "*.json"))
	gapsSeen, embSeen := 0, 0
	for _, p := range paths {
		name := filepath.Base(filepath.Dir(p))
		pj, ok := policies.Get(name)
		if !ok {
			continue
		}
		e, err := gate.NewEngine(pj)
		if err != nil {
			t.Fatal(err)
		}
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, req := range [][]byte{body, roughen(t, body)} {
			out, err := e.Evaluate(req)
			if err != nil {
				continue // an error case: no decision
			}
			d, err := readDecision(out, false)
			if err != nil {
				t.Fatal(err)
			}
			if !d.hasGap() {
				continue
			}
			gapsSeen++
			query, emb := requestQuery(req)
			if emb != nil {
				embSeen++
			}
			got := newRecord(query, emb, d).appendGapEvent(nil, gapKind(d.GapEvent), "")
			if !bytes.Equal(got, d.GapEvent) {
				t.Errorf("%s: the server's event\n%s\nthe decision's gap_event\n%s", p, got, d.GapEvent)
			}
		}
	}
	if gapsSeen < 20 || embSeen < 2 {
		t.Fatalf("only %d gap decisions (%d with an embedding) compared", gapsSeen, embSeen)
	}
}

// roughen pads the request's query with spaces and rewrites its
// query_embedding with nine more significant digits per number, or gives it
// one in forms a decision never writes (exponents, more than six decimals).
func roughen(t *testing.T, body []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	var q string
	if json.Unmarshal(m["query"], &q) == nil {
		m["query"], _ = json.Marshal("  " + q + "\n")
	}
	var emb []float64
	if json.Unmarshal(m["query_embedding"], &emb) == nil && len(emb) > 0 {
		for i := range emb {
			emb[i] = emb[i]*(1+1e-9) + 1e-10
		}
		m["query_embedding"], _ = json.Marshal(emb)
	} else if _, ok := m["query_embedding"]; !ok {
		// Chunks without embeddings leave it unused by the signals, but
		// a gap event still records it.
		m["query_embedding"] = json.RawMessage(`[0.1234567, -5E-1, 1e-3, 0.3333333333, 0, -0.0000004]`)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRecordGapEventComment: the comment is one more member of the same
// object, after the core's fields.
func TestRecordGapEventComment(t *testing.T) {
	d := &decisionView{Action: "inject", Confidence: "0.8", Signals: []byte(`{"max_similarity":0.9}`),
		Chunks: []chunkView{{ID: "a", DocID: "d", Kept: true, Score: "0.8"}}}
	got := string(newRecord("q", nil, d).appendGapEvent(nil, "thumbs_down", `wrong "product"`))
	want := `{"kind":"thumbs_down","query":"q","confidence":0.8,"signals":{"max_similarity":0.9},` +
		`"top_chunks":[{"id":"a","doc_id":"d","score":0.8}],"comment":"wrong \"product\""}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
