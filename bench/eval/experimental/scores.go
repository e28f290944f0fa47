package experimental

import "math"

// ChunkFeatures are per-chunk score signals computed within one request
// (the top k the gate receives), so a query whose scores all sit high or low
// is put on the same footing as any other.
type ChunkFeatures struct {
	Vector      float64 // raw ada-002 cosine; missing -> the request's lowest
	BM25        float64 // raw BM25; missing -> the request's lowest
	VecZ        float64 // (vector - mean) / sd within the request
	BM25Z       float64
	VecGap      float64 // vector - the request's lowest vector (gap to the k-th)
	VecTopGap   float64 // top vector - vector (distance below the best)
	BM25Rel     float64 // bm25 / top bm25 of the request
	RankVec     float64 // 1-based rank by vector within the request
	RankBM25    float64
	RRF         float64 // 1/(60+rankVec) + 1/(60+rankBM25), ranks within the request
	Position    float64 // 1-based position in the request (retriever order)
	Agree       float64 // 1 - |rankVec - rankBM25| / (n-1): do both retrievers place it alike?
	BothPresent float64 // 1 when both scores are present
}

// Impute fills each missing score with the lowest present score of the
// same kind in the request: a passage absent from a retriever's top 100
// scored below every passage that retriever did return, so the request's
// lowest is an upper bound that never ranks it above a present one.
func Impute(ps []Passage) (vec, bm []float64) {
	minV, minB := math.Inf(1), math.Inf(1)
	for _, p := range ps {
		if p.HasVec && p.Vector < minV {
			minV = p.Vector
		}
		if p.HasBM && p.BM25 < minB {
			minB = p.BM25
		}
	}
	if math.IsInf(minV, 1) {
		minV = 0
	}
	if math.IsInf(minB, 1) {
		minB = 0
	}
	for _, p := range ps {
		v, b := minV, minB
		if p.HasVec {
			v = p.Vector
		}
		if p.HasBM {
			b = p.BM25
		}
		vec, bm = append(vec, v), append(bm, b)
	}
	return vec, bm
}

// Features computes ChunkFeatures for every chunk of one request.
func Features(ps []Passage) []ChunkFeatures {
	n := len(ps)
	if n == 0 {
		return nil
	}
	vec, bm := Impute(ps)
	mv, sv := meanSD(vec)
	mb, sb := meanSD(bm)
	lowV, topV, topB := vec[0], vec[0], bm[0]
	for i := range vec {
		lowV = math.Min(lowV, vec[i])
		topV = math.Max(topV, vec[i])
		topB = math.Max(topB, bm[i])
	}
	rv, rb := ranksDesc(vec), ranksDesc(bm)
	out := make([]ChunkFeatures, n)
	for i := range ps {
		f := &out[i]
		f.Vector, f.BM25 = vec[i], bm[i]
		f.VecZ, f.BM25Z = z(vec[i], mv, sv), z(bm[i], mb, sb)
		f.VecGap, f.VecTopGap = vec[i]-lowV, topV-vec[i]
		if topB > 0 {
			f.BM25Rel = bm[i] / topB
		}
		f.RankVec, f.RankBM25 = rv[i], rb[i]
		f.RRF = 1/(60+rv[i]) + 1/(60+rb[i])
		f.Position = float64(i + 1)
		if n > 1 {
			f.Agree = 1 - math.Abs(rv[i]-rb[i])/float64(n-1)
		} else {
			f.Agree = 1
		}
		if ps[i].HasVec && ps[i].HasBM {
			f.BothPresent = 1
		}
	}
	return out
}

func z(x, m, sd float64) float64 {
	if sd == 0 {
		return 0
	}
	return (x - m) / sd
}

func meanSD(x []float64) (float64, float64) {
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return m, math.Sqrt(s / float64(len(x)))
}

// ranksDesc gives 1-based ranks, highest first, ties sharing the average rank.
func ranksDesc(x []float64) []float64 {
	n := len(x)
	r := make([]float64, n)
	for i := range x {
		above, same := 0, 0
		for j := range x {
			if x[j] > x[i] {
				above++
			} else if x[j] == x[i] {
				same++
			}
		}
		r[i] = float64(above) + float64(same+1)/2
	}
	return r
}
