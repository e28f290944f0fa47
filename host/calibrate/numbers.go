package calibrate

import (
	"fmt"
	"math"

	"github.com/ctxgate/ctxgate/gate"
)

// MaxRawScore bounds the bm25 and sparse scores calibration reads: it
// takes their medians to choose the saturations (s/(s+m)), and a score
// near the float64 limit (1.797e308) would overflow to +Inf there. No
// retriever scores anywhere near it (a SPLADE score of 1e6 is large).
const MaxRawScore = 1e300

// CheckRequest says what in a request calibration cannot compute with, if
// anything: the field below the request ("chunks[3].scores.bm25") and the
// message; msg is "" when the request is fine. Values the gate refuses
// (NaN, infinities) are the gate decoder's to name.
func CheckRequest(req *gate.Request) (field, msg string) {
	check := func(at string, cs []gate.Chunk) (string, string) {
		for i := range cs {
			s := &cs[i].Scores
			for _, v := range []struct {
				name string
				has  bool
				x    float64
			}{{"bm25", s.HasBM25, s.BM25}, {"sparse", s.HasSparse, s.Sparse}} {
				if v.has && !(math.Abs(v.x) <= MaxRawScore) {
					return fmt.Sprintf("%s[%d].scores.%s", at, i, v.name),
						"must be a finite number at most 1e300 in magnitude for calibration (it takes the median of the best scores), not " + num(v.x)
				}
			}
		}
		return "", ""
	}
	if f, m := check("chunks", req.Chunks); m != "" {
		return f, m
	}
	for l, list := range req.ResultsPerQuery {
		if f, m := check(fmt.Sprintf("results_per_query[%d]", l), list); m != "" {
			return f, m
		}
	}
	return "", ""
}
