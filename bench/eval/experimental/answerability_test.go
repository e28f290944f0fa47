package experimental

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/bench/eval"
	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/policies"
)

var answerSetsCache *AnswerSets

func loadAnswerSets(t testing.TB) *AnswerSets {
	t.Helper()
	if answerSetsCache != nil {
		return answerSetsCache
	}
	dir, err := eval.DataDirFrom(".")
	if errors.Is(err, eval.ErrNoData) {
		t.Skip("skipping: ../shared/data is absent")
	}
	if err != nil {
		t.Fatal(err)
	}
	e, err := gate.NewEngine(policies.Default())
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadAnswerSets(dir, e)
	if err != nil {
		t.Fatal(err)
	}
	answerSetsCache = s
	return s
}

// cvFold puts a query in one of k folds by a hash of its split group and
// id, so that every request of one query (TREC: both labels, every k and
// every retriever pair) shares a fold. rep varies the assignment between
// repeats.
func cvFold(r FeatureRow, k, rep int) int {
	return int(hash64(fmt.Sprintf("cv%d:%s:%s", rep, r.Group, r.ID)) % uint64(k))
}

func hash64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

// crossValidate is the out-of-fold AUROC per family of a feature list over
// tune rows: 5 folds, averaged over 3 fold assignments.
func crossValidate(t testing.TB, names []string, rows []FeatureRow) map[string]float64 {
	const k, reps = 5, 3
	out := map[string]float64{}
	for rep := 0; rep < reps; rep++ {
		oof := make([]float64, len(rows))
		for f := 0; f < k; f++ {
			var train []FeatureRow
			for _, r := range rows {
				if cvFold(r, k, rep) != f {
					train = append(train, r)
				}
			}
			m, err := Fit(names, train, AnswerL2, loadAnswerSets(t).TuneSize)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range rows {
				if cvFold(r, k, rep) == f {
					oof[i] = m.Logit(m.Row(r.F))
				}
			}
		}
		for set, a := range aurocBySet(rows, oof) {
			out[set] += a / reps
		}
	}
	return out
}

func aurocBySet(rows []FeatureRow, score []float64) map[string]float64 {
	sc, lb := map[string][]float64{}, map[string][]bool{}
	for i, r := range rows {
		sc[r.Set] = append(sc[r.Set], score[i])
		lb[r.Set] = append(lb[r.Set], r.Label)
	}
	out := map[string]float64{}
	for s := range sc {
		out[s] = eval.AUROC(sc[s], lb[s])
	}
	return out
}

func familiesOf(rows []FeatureRow, order []string) []string {
	has := map[string]bool{}
	for _, r := range rows {
		has[r.Set] = true
	}
	var out []string
	for _, f := range order {
		if has[f] {
			out = append(out, f)
		}
	}
	return out
}

func cvLine(name string, order []string, a map[string]float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-64s", name)
	sum := 0.0
	for _, s := range order {
		fmt.Fprintf(&b, " %.3f", a[s])
		sum += a[s]
	}
	fmt.Fprintf(&b, " | mean %.3f", sum/float64(len(order)))
	return b.String()
}

// TestAnswerabilityCandidates logs, for each model, every feature alone
// (tune AUROC, no fitting) and the cross-validated candidate lists the
// choice was made among. It reads the tune halves only.
func TestAnswerabilityCandidates(t *testing.T) {
	s := loadAnswerSets(t)
	for _, fam := range []struct {
		name  string
		rows  []FeatureRow
		cands [][]string
	}{
		{"scored", TuneRows(s.Scored), [][]string{
			{"retriever_agreement"},
			{"retriever_agreement", "term_coverage_mean"},
			ScoredFeatures,
			{"retriever_agreement", "term_coverage_mean", "chunk_count", "answer_coverage"},
			{"retriever_agreement", "term_coverage_mean", "chunk_count", "lexical_spread", "semantic_spread"},
			{"retriever_agreement", "term_coverage_mean", "chunk_count", "term_coverage_best"},
		}},
		{"text", TuneRows(s.Text), [][]string{
			{"answer_coverage"},
			{"answer_coverage", "doc_concentration"},
			{"answer_coverage", "doc_concentration", "chunk_count"},
			TextFeatures,
			{"answer_coverage", "doc_concentration", "chunk_count", "no_term_match", "term_coverage_mean"},
			{"answer_coverage", "doc_concentration", "chunk_count", "no_term_match", "term_coverage_best"},
		}},
	} {
		order := familiesOf(fam.rows, s.Families)
		t.Logf("%s model, tune halves: %s", fam.name, strings.Join(order, " "))
		for _, f := range gate.FeatureNames {
			sc := make([]float64, len(fam.rows))
			for i, r := range fam.rows {
				sc[i] = r.F[f]
			}
			t.Log(cvLine("alone: "+f, order, aurocBySet(fam.rows, sc)))
		}
		for _, c := range fam.cands {
			t.Log(cvLine("cv: "+strings.Join(c, "+"), order, crossValidate(t, c, fam.rows)))
		}
	}
}

// fitted is the default's models and bands as the tune halves give them.
func fitted(t testing.TB) (text, scored *Model, b Bands, conf []Scored) {
	s := loadAnswerSets(t)
	text, scored, err := FitDefault(s)
	if err != nil {
		t.Fatal(err)
	}
	conf = Confidences(s, text, scored)
	return text, scored, ChooseBands(conf), conf
}

// TestAnswerabilityWeights refits the default policy's answerability models
// and its bands on the tune halves, and fails when policies/default.json
// drifts from what the data gives (to 4 decimals, as the policy writes
// them).
func TestAnswerabilityWeights(t *testing.T) {
	text, scored, bands, _ := fitted(t)
	e, err := gate.NewEngine(policies.Default())
	if err != nil {
		t.Fatal(err)
	}
	cfg := e.Policy().Answerability
	if cfg == nil || !cfg.HasScored {
		t.Fatal("policies/default.json has no signals.answerability with a scored model")
	}
	for _, c := range []struct {
		name string
		m    *Model
		got  gate.AnswerabilityModel
	}{{"text", text, cfg.Text}, {"scored", scored, cfg.Scored}} {
		t.Logf("%s: %s", c.name, modelJSON(c.m))
		if roundW(c.got.Bias) != roundW(c.m.B) {
			t.Errorf("%s bias = %.4f in the policy, the data gives %.4f", c.name, c.got.Bias, c.m.B)
		}
		used := 0
		for j, n := range c.m.Names {
			i := featureIndex(n)
			if !c.got.Used[i] || roundW(c.got.Weights[i]) != roundW(c.m.W[j]) {
				t.Errorf("%s weight %s = %.4f in the policy, the data gives %.4f", c.name, n, c.got.Weights[i], c.m.W[j])
			}
			used++
		}
		for _, u := range c.got.Used {
			if u {
				used--
			}
		}
		if used != 0 {
			t.Errorf("%s: the policy weights features the fit does not", c.name)
		}
	}
	t.Logf("bands: inject >= %.2f, caveat >= %.2f (bound by %s)", bands.Inject, bands.Caveat, bands.Binding)
	b := e.Policy().Bands
	if len(b) != 3 || b[0].Action != gate.ActionInject || b[1].Action != gate.ActionCaveat || b[2].Action != gate.ActionRefuse {
		t.Fatalf("default bands should be inject / caveat / refuse: %+v", b)
	}
	if b[0].Min != bands.Inject || b[1].Min != bands.Caveat {
		t.Errorf("default.json bands inject %.2f caveat %.2f; the tune halves give %.2f %.2f", b[0].Min, b[1].Min, bands.Inject, bands.Caveat)
	}
}

func featureIndex(name string) int {
	for i, n := range gate.FeatureNames {
		if n == name {
			return i
		}
	}
	return -1
}

func roundW(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// modelJSON is a model as the policy writes it.
func modelJSON(m *Model) string {
	idx := make([]int, len(m.Names))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return featureIndex(m.Names[idx[a]]) < featureIndex(m.Names[idx[b]]) })
	var parts []string
	for _, j := range idx {
		parts = append(parts, fmt.Sprintf("%q: %.4f", m.Names[j], m.W[j]))
	}
	return fmt.Sprintf(`{"bias": %.4f, "weights": {%s}}`, m.B, strings.Join(parts, ", "))
}

// TestAnswerabilityOperatingPoint logs, per family on its tune half, the
// largest answer threshold within the error limit, and the rates at the
// chosen bands.
func TestAnswerabilityOperatingPoint(t *testing.T) {
	_, _, b, conf := fitted(t)
	t.Logf("caveat >= %.2f (bound by %s), inject >= %.2f", b.Caveat, b.Binding, b.Inject)
	s := loadAnswerSets(t)
	for _, fam := range s.Families {
		var p eval.PR
		for _, c := range conf {
			if c.Row.Tune && c.Row.Set == fam {
				p.Add(c.Conf >= b.Caveat, c.Row.Label)
			}
		}
		t.Logf("%-18s tune: hallucination %.2f error %.2f", fam, p.HallucinationRate(), p.ErrorRate())
	}
}
