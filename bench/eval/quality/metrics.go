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
	// Bins and ECE: the confidence's reliability (Reliability).
	Bins []Bin
	ECE  float64
	// Refused is the policy's error when it cannot decide the set's
	// requests at all (a preset that decides by cosine levels, given dot
	// products); every figure is then n/a.
	Refused string
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
	r.Bins, r.ECE = Reliability(conf, lab)
	r.ChunkAUROC = eval.AUROC(cs, cl)
	r.ChunkCurve = eval.CoverageCurve(cs, cl)
	return r
}

// Bin is one bin of a reliability diagram: the requests whose confidence
// fell in [Lo, Lo+0.1), their mean confidence and the share that held the
// answer.
type Bin struct {
	Lo, Conf, Answerable float64
	N                    int
}

// ReliabilityBins is the number of equal-width bins of a reliability
// diagram and of the expected calibration error.
const ReliabilityBins = 10

// Reliability bins confidences against labels and gives the expected
// calibration error: the bins' |mean confidence − share answerable|,
// weighted by how many requests each holds (Guo et al., 2017).
func Reliability(conf []float64, labels []bool) ([]Bin, float64) {
	bins := make([]Bin, ReliabilityBins)
	for i := range bins {
		bins[i].Lo = float64(i) / ReliabilityBins
	}
	for i, c := range conf {
		b := int(c * ReliabilityBins)
		if b >= ReliabilityBins {
			b = ReliabilityBins - 1
		}
		if b < 0 {
			b = 0
		}
		bins[b].N++
		bins[b].Conf += c
		if labels[i] {
			bins[b].Answerable++
		}
	}
	ece := 0.0
	for i := range bins {
		if n := float64(bins[i].N); n > 0 {
			bins[i].Conf /= n
			bins[i].Answerable /= n
			d := bins[i].Conf - bins[i].Answerable
			if d < 0 {
				d = -d
			}
			ece += n / float64(len(conf)) * d
		}
	}
	return bins, ece
}
