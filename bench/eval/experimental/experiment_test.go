package experimental

import (
	"errors"
	"math"
	"os"
	"sort"
	"testing"

	"github.com/ctxgate/ctxgate/bench/eval"
)

func load(t testing.TB) (*eval.DL19, []eval.ClapNQ) {
	t.Helper()
	d, c, err := eval.LoadSetsFrom(".")
	if errors.Is(err, eval.ErrNoData) {
		t.Skip("skipping: ../shared/data is absent")
	}
	if err != nil {
		t.Fatal(err)
	}
	return d, c
}

// table is feature rows with labels and halves.
type table struct {
	names []string
	rows  [][]float64
	y     []bool
	tune  []bool
	group []string // query id: cross-validation folds never split a query
}

func (tb *table) col(j int, tune bool) ([]float64, []bool) {
	var s []float64
	var l []bool
	for i, r := range tb.rows {
		if tb.tune[i] == tune {
			s, l = append(s, r[j]), append(l, tb.y[i])
		}
	}
	return s, l
}

func (tb *table) half(tune bool) ([][]float64, []bool) {
	var x [][]float64
	var y []bool
	for i, r := range tb.rows {
		if tb.tune[i] == tune {
			x, y = append(x, r), append(y, tb.y[i])
		}
	}
	return x, y
}

func (tb *table) subset(names ...string) *table {
	idx := []int{}
	for _, n := range names {
		for j, m := range tb.names {
			if m == n {
				idx = append(idx, j)
			}
		}
	}
	out := &table{names: names, y: tb.y, tune: tb.tune, group: tb.group}
	for _, r := range tb.rows {
		nr := make([]float64, len(idx))
		for k, j := range idx {
			nr[k] = r[j]
		}
		out.rows = append(out.rows, nr)
	}
	return out
}

// fit fits a logistic on the tune half and returns AUROC on both halves.
func (tb *table) fit() (*Logistic, float64, float64) {
	x, y := tb.half(true)
	m := FitLogistic(tb.names, x, y, 3000, 0.5, 1e-3)
	auc := func(tune bool) float64 {
		x, y := tb.half(tune)
		s := make([]float64, len(x))
		for i, r := range x {
			s[i] = m.Score(r)
		}
		return eval.AUROC(s, y)
	}
	return m, auc(true), auc(false)
}

func dl19Passages(d *eval.DL19) []string {
	ids := make([]string, 0, len(d.Passes))
	for id := range d.Passes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = d.Passes[id]
	}
	return out
}

func clapTable(d *eval.DL19, clap []eval.ClapNQ) *table {
	idfDL := BuildIDF(dl19Passages(d), 2000)
	tb := &table{names: []string{"coverage", "idf_coverage_dl19", "length_coverage", "best_sentence", "window10", "window20",
		"bigram", "answer_cue", "log_tokens", "title_coverage", "text_coverage", "sqrt_tokens"}}
	for _, it := range eval.ClapNQItems(clap) {
		q, c := it.Req.Query, it.Req.Chunks[0]
		full := eval.ChunkText(c.Title, c.Text)
		bs, _ := BestSentence(q, c.Text)
		bg := BigramCoverage(q, full)
		if math.IsNaN(bg) {
			bg = Coverage(q, full)
		}
		tb.rows = append(tb.rows, []float64{Coverage(q, full), IDFCoverage(q, full, idfDL), LengthCoverage(q, full), bs,
			WindowCoverage(q, c.Text, 10), WindowCoverage(q, c.Text, 20), bg, AnswerCue(q, c.Text),
			math.Log(1 + TokenCount(c.Text)), Coverage(q, c.Title), Coverage(q, c.Text), math.Sqrt(TokenCount(c.Text))})
		tb.y = append(tb.y, it.Answerable)
		tb.tune = append(tb.tune, it.Tune)
		tb.group = append(tb.group, it.ID)
	}
	return tb
}

func dl19Table(d *eval.DL19, k int) *table {
	tb := &table{names: []string{"vector", "bm25", "vec_z", "bm25_z", "vec_gap", "vec_top_gap", "bm25_rel", "rank_vec", "rank_bm25",
		"rrf", "position", "agree", "both_present", "coverage", "req_top_vec", "req_mean_vec", "idf_coverage_req", "window10",
		"bm25_per_term", "bm25_per_token", "vec_x_cov", "bm25_gap_per_term", "n_terms", "vec_minmax"}}
	for _, it := range d.DL19Items(k) {
		var ps []Passage
		var texts []string
		for _, c := range it.Req.Chunks {
			ps = append(ps, Passage{Text: c.Text, Vector: c.Vector, BM25: c.BM25, HasVec: c.HasVector, HasBM: c.HasBM25})
			texts = append(texts, c.Text)
		}
		fs := Features(ps)
		idfReq := BuildIDF(texts, 1<<30)
		var top, mean float64
		for _, f := range fs {
			top = math.Max(top, f.Vector)
			mean += f.Vector / float64(len(fs))
		}
		nt := float64(len(eval.QueryTerms(it.Req.Query)))
		if nt == 0 {
			nt = 1
		}
		ntok := float64(len(eval.Tokens(it.Req.Query)))
		lowB := math.Inf(1)
		for _, f := range fs {
			lowB = math.Min(lowB, f.BM25)
		}
		for i, f := range fs {
			tx := it.Req.Chunks[i].Text
			tb.rows = append(tb.rows, []float64{f.Vector, f.BM25, f.VecZ, f.BM25Z, f.VecGap, f.VecTopGap, f.BM25Rel, f.RankVec, f.RankBM25,
				f.RRF, f.Position, f.Agree, f.BothPresent, Coverage(it.Req.Query, tx), top, mean, IDFCoverage(it.Req.Query, tx, idfReq),
				WindowCoverage(it.Req.Query, tx, 10), f.BM25 / nt, f.BM25 / ntok, f.Vector * Coverage(it.Req.Query, tx), (f.BM25 - lowB) / nt, nt, minmax(f.Vector, fs)})
			tb.y = append(tb.y, it.ChunkRel[i])
			tb.tune = append(tb.tune, it.Tune)
			tb.group = append(tb.group, it.ID)
		}
	}
	return tb
}

func logSingles(t *testing.T, tb *table) {
	for j, n := range tb.names {
		st, lt := tb.col(j, true)
		sh, lh := tb.col(j, false)
		t.Logf("  %-20s tune %.4f  held %.4f", n, eval.AUROC(st, lt), eval.AUROC(sh, lh))
	}
}

func logModel(t *testing.T, label string, tb *table) (float64, float64) {
	m, at, ah := tb.fit()
	w, b := m.Raw()
	t.Logf("  %-34s tune %.4f  held %.4f   raw weights %v bias %.4f", label, at, ah, round4(w), b)
	return at, ah
}

func round4(w []float64) []float64 {
	out := make([]float64, len(w))
	for i, v := range w {
		out[i] = math.Round(v*1e4) / 1e4
	}
	return out
}

func TestExperimentClapNQ(t *testing.T) {
	d, clap := load(t)
	tb := clapTable(d, clap)
	t.Log("ClapNQ single signals (AUROC):")
	logSingles(t, tb)
	t.Log("ClapNQ logistic combinations (fit on tune):")
	logModel(t, "all", tb)
	logModel(t, "coverage+log_tokens", tb.subset("coverage", "log_tokens"))
	logModel(t, "idf+best_sentence+window", tb.subset("idf_coverage_dl19", "best_sentence", "window10"))
	logModel(t, "length_cov+best_sent+window+cue", tb.subset("length_coverage", "best_sentence", "window10", "answer_cue"))
	logModel(t, "text_coverage+log_tokens", tb.subset("text_coverage", "log_tokens"))
	logModel(t, "text_coverage+sqrt_tokens", tb.subset("text_coverage", "sqrt_tokens"))
	logModel(t, "text_coverage+best_sentence", tb.subset("text_coverage", "best_sentence"))
	logModel(t, "text_coverage+best_sentence+log_tokens", tb.subset("text_coverage", "best_sentence", "log_tokens"))
	logModel(t, "best_sentence+log_tokens", tb.subset("best_sentence", "log_tokens"))
	logModel(t, "text_coverage+window20+log_tokens", tb.subset("text_coverage", "window20", "log_tokens"))
	logModel(t, "lexical (no length)", tb.subset("coverage", "idf_coverage_dl19", "length_coverage", "best_sentence", "window10", "bigram", "answer_cue", "title_coverage", "text_coverage"))
}

func TestExperimentDL19(t *testing.T) {
	d, _ := load(t)
	for _, k := range []int{10, 20} {
		tb := dl19Table(d, k)
		t.Logf("DL19 passage level, hybrid top %d, single signals (AUROC):", k)
		logSingles(t, tb)
		t.Log("DL19 logistic combinations (fit on tune):")
		logModel(t, "all", tb)
		logModel(t, "scores only (vec,bm25,z,gap,rrf)", tb.subset("vector", "bm25", "vec_z", "bm25_z", "vec_gap", "vec_top_gap", "bm25_rel", "rrf", "agree", "both_present"))
		logModel(t, "vector+vec_z+bm25_z", tb.subset("vector", "vec_z", "bm25_z"))
		logModel(t, "vector+vec_z+bm25_rel", tb.subset("vector", "vec_z", "bm25_rel"))
		logModel(t, "vec_z+bm25_z", tb.subset("vec_z", "bm25_z"))
		logModel(t, "vector+bm25", tb.subset("vector", "bm25"))
		logModel(t, "vec_top_gap+vec_gap+both_present", tb.subset("vec_top_gap", "vec_gap", "both_present"))
		logModel(t, "vec_minmax+both_present", tb.subset("vec_minmax", "both_present"))
		logModel(t, "vec_minmax+vector+both_present", tb.subset("vec_minmax", "vector", "both_present"))
		logModel(t, "vec_minmax+vec_gap+both_present", tb.subset("vec_minmax", "vec_gap", "both_present"))
		logModel(t, "vector+bm25_per_term", tb.subset("vector", "bm25_per_term"))
		logModel(t, "vector+bm25_per_token", tb.subset("vector", "bm25_per_token"))
		logModel(t, "vector+vec_gap+bm25_per_term", tb.subset("vector", "vec_gap", "bm25_per_term"))
		logModel(t, "vector+vec_gap+bm25_per_term+cov", tb.subset("vector", "vec_gap", "bm25_per_term", "coverage"))
		logModel(t, "vector+bm25_per_term+cov", tb.subset("vector", "bm25_per_term", "coverage"))
	}
}

// cv is the out-of-fold AUROC on the tune half: rows are dealt into folds
// by a hash of their query id, a model is fitted on the other folds, and
// the held fold's scores are pooled. It selects feature sets without ever
// looking at the held-out half.
func (tb *table) cv(folds int) float64 {
	var scores []float64
	var labels []bool
	for f := 0; f < folds; f++ {
		var xt [][]float64
		var yt []bool
		var xv [][]float64
		var yv []bool
		for i, r := range tb.rows {
			if !tb.tune[i] {
				continue
			}
			if fold(tb.group[i], folds) == f {
				xv, yv = append(xv, r), append(yv, tb.y[i])
			} else {
				xt, yt = append(xt, r), append(yt, tb.y[i])
			}
		}
		if len(xv) == 0 {
			continue
		}
		m := FitLogistic(tb.names, xt, yt, 3000, 0.5, 1e-3)
		for i, r := range xv {
			scores, labels = append(scores, m.Score(r)), append(labels, yv[i])
		}
	}
	return eval.AUROC(scores, labels)
}

func fold(id string, n int) int {
	h := uint32(2166136261)
	for _, b := range []byte(id) {
		h ^= uint32(b)
		h *= 16777619
	}
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	return int(h % uint32(n))
}

// forward is greedy forward selection by cross-validated AUROC on the tune
// half, stopping when a feature adds less than 0.002.
func forward(t *testing.T, tb *table, folds int) []string {
	var chosen []string
	best := 0.5
	for {
		var pick string
		pickAUC := best
		for _, n := range tb.names {
			if contains(chosen, n) {
				continue
			}
			a := tb.subset(append(append([]string{}, chosen...), n)...).cv(folds)
			if a > pickAUC+0.002 {
				pick, pickAUC = n, a
			}
		}
		if pick == "" {
			return chosen
		}
		chosen, best = append(chosen, pick), pickAUC
		t.Logf("  forward: +%-20s cv-on-tune %.4f", pick, best)
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// TestForwardSelection takes minutes of CPU (hundreds of fits), so it runs
// only with CTXGATE_EVAL_LONG=1.
func TestForwardSelection(t *testing.T) {
	if os.Getenv("CTXGATE_EVAL_LONG") == "" {
		t.Skip("set CTXGATE_EVAL_LONG=1 to run the forward selection (minutes of CPU)")
	}
	d, clap := load(t)
	t.Log("ClapNQ (10 folds on tune):")
	ct := clapTable(d, clap)
	sel := forward(t, ct, 10)
	logModel(t, "selected", ct.subset(sel...))
	for _, k := range []int{10, 20} {
		t.Logf("DL19 hybrid top %d, scores only (leave-one-query-out on tune):", k)
		dt := dl19Table(d, k)
		scoreOnly := dt.subset("vector", "bm25", "vec_z", "bm25_z", "vec_gap", "vec_top_gap", "bm25_rel", "rank_vec", "rank_bm25",
			"rrf", "position", "agree", "both_present", "req_top_vec", "req_mean_vec", "bm25_per_term", "bm25_per_token", "bm25_gap_per_term", "n_terms")
		sel := forward(t, scoreOnly, 23)
		logModel(t, "selected", dt.subset(sel...))
		t.Logf("DL19 hybrid top %d, scores and text:", k)
		sel = forward(t, dt, 23)
		logModel(t, "selected", dt.subset(sel...))
	}
}

// minmax is v's place between the request's lowest and highest vector.
func minmax(v float64, fs []ChunkFeatures) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, f := range fs {
		lo, hi = math.Min(lo, f.Vector), math.Max(hi, f.Vector)
	}
	if hi == lo {
		return 1
	}
	return (v - lo) / (hi - lo)
}
