package experimental

import (
	"github.com/ctxgate/ctxgate/bench/eval"
	"github.com/ctxgate/ctxgate/bench/eval/quality"
	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/internal/logistic"
)

// The answerability models of the default policy (version 4), fitted on the
// tune halves by Fit (L2 1e-3 on standardised weights) over the gate's
// own features (gate.Engine.Features), and chosen by cross-validation on the
// tune halves only (answerability_test.go, bench/eval/PROPOSAL.md):
//   - text: NoMIRACL (nine languages) and ClapNQ, requests without both a
//     lexical and a semantic score;
//   - scored: the answer-removed sets of DL19 (BM25 + ada-002) and DL21
//     (BM25 + SPLADE++), over requests of 5, 10 and 20 chunks.
var (
	TextFeatures   = []string{"answer_coverage", "doc_concentration"}
	ScoredFeatures = []string{"retriever_agreement", "term_coverage_mean"}
)

// FeatureRow is one labeled request's features.
type FeatureRow struct {
	Set, ID string
	Tune    bool
	Label   bool
	Paired  bool // the request has a lexical and a semantic score
	F       map[string]float64
}

// AnswerabilityRows computes every item's answerability features through the core.
func AnswerabilityRows(e *gate.Engine, items []eval.Item) ([]FeatureRow, error) {
	rows := make([]FeatureRow, 0, len(items))
	for _, it := range items {
		fs, err := e.Features(quality.ToGate(it.Req))
		if err != nil {
			return nil, err
		}
		r := FeatureRow{Set: it.Set, ID: it.ID, Tune: it.Tune, Label: it.Answerable, F: map[string]float64{}}
		for _, f := range fs {
			r.F[f.Name] = f.Value
		}
		r.Paired = paired(it.Req)
		rows = append(rows, r)
	}
	return rows, nil
}

func paired(r *eval.Request) bool {
	lex, sem := false, false
	for _, c := range r.Chunks {
		lex = lex || c.HasBM25
		sem = sem || c.HasVector || c.HasSparse
	}
	return lex && sem
}

// Model is a fitted logistic model over named features.
type Model struct {
	Names []string
	logistic.Model
}

// Row is one feature row's values in the model's order.
func (m *Model) Row(f map[string]float64) []float64 { return row(m.Names, f) }

func row(names []string, f map[string]float64) []float64 {
	x := make([]float64, len(names))
	for j, n := range names {
		x[j] = f[n]
	}
	return x
}

// Fit fits the named features of rows with L2 penalty l2.
func Fit(names []string, rows []FeatureRow, l2 float64) (*Model, error) {
	x := make([][]float64, len(rows))
	y := make([]bool, len(rows))
	for i, r := range rows {
		x[i], y[i] = row(names, r.F), r.Label
	}
	m, err := logistic.Fit(x, y, nil, l2)
	if err != nil {
		return nil, err
	}
	return &Model{Names: names, Model: *m}, nil
}
