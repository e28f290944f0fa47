// Package quality runs every preset policy through the gate (natively, via
// gate.Engine.Decide) over the labeled sets of package eval and writes
// docs/quality.md with its plots. It is the only part of the evaluation
// that imports the core.
package quality

import (
	"github.com/ctxgate/ctxgate/bench/eval"
	"github.com/ctxgate/ctxgate/gate"
)

// Outcome is what one policy decided for one item.
type Outcome struct {
	Confidence float64
	Answered   bool      // action inject or caveat: the model answers from the sources
	ChunkScore []float64 // per input chunk, in request order
	ChunkKept  []bool
}

// ToGate turns an evaluation request into a gate request. Only the scores
// the retriever returned are sent (Has flags), so a passage missing from
// BM25's top 100 carries no bm25 at all rather than a made-up 0.
func ToGate(r *eval.Request) *gate.Request {
	g := &gate.Request{Query: r.Query, Chunks: make([]gate.Chunk, len(r.Chunks)), VectorMetric: gate.VectorMetric(r.VectorMetric)}
	for i, c := range r.Chunks {
		g.Chunks[i] = gate.Chunk{ID: c.ID, DocID: c.DocID, Title: c.Title, Text: c.Text}
		g.Chunks[i].Scores.Vector, g.Chunks[i].Scores.HasVector = c.Vector, c.HasVector
		g.Chunks[i].Scores.BM25, g.Chunks[i].Scores.HasBM25 = c.BM25, c.HasBM25
		g.Chunks[i].Scores.Sparse, g.Chunks[i].Scores.HasSparse = c.Sparse, c.HasSparse
	}
	return g
}

// Answered tells whether an action lets the model answer from the sources.
// Fallback (answer from the model's own knowledge: the confidence gate fired) and refuse both
// withhold the evidence, so for NoMIRACL's rates they count as "I don't know".
func Answered(a gate.Action) bool { return a == gate.ActionInject || a == gate.ActionCaveat }

// Run decides every item with one engine. Chunk outcomes come back in
// confidence order; they are matched to the request's chunks by id.
func Run(e *gate.Engine, items []eval.Item) ([]Outcome, error) {
	out := make([]Outcome, len(items))
	for i, it := range items {
		d, err := e.Decide(ToGate(it.Req))
		if err != nil {
			return nil, err
		}
		o := Outcome{Confidence: d.Confidence, Answered: Answered(d.Action),
			ChunkScore: make([]float64, len(it.Req.Chunks)), ChunkKept: make([]bool, len(it.Req.Chunks))}
		pos := map[string]int{}
		for j, c := range it.Req.Chunks {
			pos[c.ID] = j
		}
		for _, co := range d.Chunks {
			if j, ok := pos[co.ID]; ok {
				o.ChunkScore[j], o.ChunkKept[j] = co.Score, co.Kept
			}
		}
		out[i] = o
	}
	return out, nil
}
