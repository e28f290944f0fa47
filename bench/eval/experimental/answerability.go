package experimental

import (
	"github.com/ctxgate/ctxgate/bench/eval"
	"github.com/ctxgate/ctxgate/bench/eval/quality"
	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/internal/logistic"
)

// The answerability models of the default policy, fitted on the tune halves
// by Fit over the gate's own features (gate.Engine.Features), and chosen by
// cross-validation on the tune halves only (answerability_test.go,
// bench/eval/PROPOSAL.md):
//   - scored: the answer-removed families (BM25 beside ada-002, TAS-B and
//     SPLADE++ on DL19, SPLADE++ on DL21), over requests of 5, 10 and 20
//     chunks, each family weighing the same;
//   - text: NoMIRACL's nine languages and ClapNQ, each weighing the same.
//
// Every feature is scale-free: what the retrievers agree on, how much of
// the question the chunks mention, how the passages concentrate on one
// document, and how many chunks there are (which the others' meaning moves
// with). No raw score level enters: levels do not carry from one retriever
// to another, and ctxgate calibrate fits them to a deployment's own.
var (
	TextFeatures   = []string{"answer_coverage", "doc_concentration", "chunk_count", "no_term_match"}
	ScoredFeatures = []string{"retriever_agreement", "term_coverage_mean", "chunk_count"}
)

// FeatureRow is one labeled request's features.
type FeatureRow struct {
	Set   string // the family: "dl19-tasb@10", "nomiracl-fi", "clapnq"
	Group string // the split's key: "dl19", "dl21", "nomiracl-fi", "clapnq"
	ID    string
	Tune  bool
	Label bool
	// Scored is true when the policy's scored model decides the request
	// (gate.Engine.AnswerabilityFeatures); else the text model does.
	Scored bool
	F      map[string]float64
}

// AnswerabilityRows computes every item's answerability features through
// the core, under policy e, and which model decides each item.
func AnswerabilityRows(e *gate.Engine, set string, items []eval.Item) ([]FeatureRow, error) {
	rows := make([]FeatureRow, 0, len(items))
	for _, it := range items {
		fs, scored, err := e.AnswerabilityFeatures(quality.ToGate(it.Req))
		if err != nil {
			return nil, err
		}
		r := FeatureRow{Set: set, Group: it.Set, ID: it.ID, Tune: it.Tune, Label: it.Answerable, Scored: scored,
			F: map[string]float64{}}
		for _, f := range fs {
			r.F[f.Name] = f.Value
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// Model is a fitted logistic model over named features.
type Model struct {
	Names []string
	logistic.Model
}

// Row is one feature row's values in the model's order.
func (m *Model) Row(f map[string]float64) []float64 { return row(m.Names, f) }

// Prob is the model's probability for one row.
func (m *Model) Prob(r FeatureRow) float64 { return m.Model.Prob(m.Row(r.F)) }

func row(names []string, f map[string]float64) []float64 {
	x := make([]float64, len(names))
	for j, n := range names {
		x[j] = f[n]
	}
	return x
}

// Fit fits the named features of rows with L2 penalty l2 (on standardised
// weights), each family (FeatureRow.Set) weighing the same in total: a
// family of 300 requests counts no more than one of 40, so the fit does not
// take the probability scale of the biggest set for everyone's. size is
// each family's number of rows over both models: the few answer-removed
// requests the text model decides weigh what they weigh in their family,
// not as a family of their own. nil counts the rows given.
func Fit(names []string, rows []FeatureRow, l2 float64, size map[string]int) (*Model, error) {
	if size == nil {
		size = map[string]int{}
		for _, r := range rows {
			size[r.Set]++
		}
	}
	x := make([][]float64, len(rows))
	y := make([]bool, len(rows))
	w := make([]float64, len(rows))
	total := 0.0
	for i, r := range rows {
		x[i], y[i] = row(names, r.F), r.Label
		w[i] = 1 / float64(size[r.Set])
		total += w[i]
	}
	// Scaled so that the weights sum to the number of rows: the L2
	// penalty then means what it means unweighted.
	for i := range w {
		w[i] *= float64(len(rows)) / total
	}
	m, err := logistic.Fit(x, y, w, l2)
	if err != nil {
		return nil, err
	}
	return &Model{Names: names, Model: *m}, nil
}
