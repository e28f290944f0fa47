package candidates

import (
	"fmt"

	"github.com/ctxgate/ctxgate/bench/eval"
	"github.com/ctxgate/ctxgate/internal/logistic"
)

var foldSalt int

type row struct {
	set  string
	grp  string
	id   string
	y    bool
	w    float64
	tune bool
	f    feats
}

func fold(set, id string, k int) int {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, b := range []byte("cv:" + string(rune('0'+foldSalt)) + set + ":" + id) {
		h ^= uint64(b)
		h *= prime
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return int(h % uint64(k))
}

type model struct {
	names []string
	m     *logistic.Model
}

func vec(f feats, names []string) []float64 {
	x := make([]float64, len(names))
	for j, n := range names {
		x[j] = f[n]
	}
	return x
}

// fit fits the named features by internal/logistic (L2 on standardised
// weights), rows weighted by wt.
func fit(names []string, rows []row, l2 float64) *model {
	x := make([][]float64, len(rows))
	y := make([]bool, len(rows))
	w := make([]float64, len(rows))
	for i, r := range rows {
		x[i], y[i], w[i] = vec(r.f, names), r.y, r.wt()
	}
	m, err := logistic.Fit(x, y, w, l2)
	if err != nil {
		panic(err)
	}
	return &model{names: names, m: m}
}

func (m *model) logit(f feats) float64 { return m.m.Logit(vec(f, m.names)) }

// cvAUROC: k-fold CV on tune rows of the given sets (training pooled over trainSets);
// returns per-set out-of-fold AUROC.
func cvAUROC(rows []row, names []string, k int, l2 float64) map[string]float64 {
	oof := map[int]float64{}
	for f := 0; f < k; f++ {
		var tr []row
		for _, r := range rows {
			if fold(r.grp, r.id, k) != f {
				tr = append(tr, r)
			}
		}
		m := fit(names, tr, l2)
		for i, r := range rows {
			if fold(r.grp, r.id, k) == f {
				oof[i] = m.logit(r.f)
			}
		}
	}
	sc := map[string][]float64{}
	lb := map[string][]bool{}
	for i, r := range rows {
		sc[r.set] = append(sc[r.set], oof[i])
		lb[r.set] = append(lb[r.set], r.y)
	}
	out := map[string]float64{}
	for s := range sc {
		out[s] = eval.AUROC(sc[s], lb[s])
	}
	return out
}

func printRow(label string, order []string, a map[string]float64) {
	fmt.Printf("%-40s", label)
	sum, n := 0.0, 0
	for _, s := range order {
		v, ok := a[s]
		if !ok {
			fmt.Printf("      - ")
			continue
		}
		fmt.Printf(" %7.3f", v)
		sum += v
		n++
	}
	fmt.Printf("  | mean %.3f\n", sum/float64(n))
}

func (r row) wt() float64 {
	if r.w == 0 {
		return 1
	}
	return r.w
}
