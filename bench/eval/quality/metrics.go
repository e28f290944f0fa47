package quality

import (
	"github.com/ctxgate/ctxgate/bench/eval"
)

// SetResult are one policy's figures on one half of one set.
type SetResult struct {
	N, Pos      int
	AUROC       float64 // query-level confidence vs answerable
	AURC        float64 // area under accuracy/coverage
	Curve       []eval.CurvePoint
	Op          eval.PR // at the policy's own operating point: answered vs answerable
	ChunkAUROC  float64 // per-chunk score vs passage relevance
	ChunkFilter eval.PR // kept vs relevant
	ChunkCurve  []eval.CurvePoint
}

// Measure computes a policy's figures over items (one half) and their outcomes.
func Measure(items []eval.Item, outs []Outcome) SetResult {
	var r SetResult
	var conf, cs []float64
	var lab, cl []bool
	for i, it := range items {
		o := outs[i]
		r.N++
		if it.Answerable {
			r.Pos++
		}
		conf, lab = append(conf, o.Confidence), append(lab, it.Answerable)
		r.Op.Add(o.Answered, it.Answerable)
		if len(it.ChunkRel) != len(it.Req.Chunks) {
			continue // no passage labels (NoMIRACL)
		}
		for j := range it.Req.Chunks {
			cs, cl = append(cs, o.ChunkScore[j]), append(cl, it.ChunkRel[j])
			r.ChunkFilter.Add(o.ChunkKept[j], it.ChunkRel[j])
		}
	}
	r.AUROC = eval.AUROC(conf, lab)
	r.Curve = eval.CoverageCurve(conf, lab)
	r.AURC = eval.AURC(r.Curve)
	r.ChunkAUROC = eval.AUROC(cs, cl)
	r.ChunkCurve = eval.CoverageCurve(cs, cl)
	return r
}
