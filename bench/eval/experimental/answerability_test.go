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

// answerSets are the labeled sets the answerability models are fitted and
// chosen on, by family: the scored model on the answer-removed TREC sets,
// the text model on NoMIRACL and ClapNQ.
type answerSets struct {
	scored, text []FeatureRow
	scoredOrder  []string // set names, in report order
	textOrder    []string
}

func loadAnswerSets(t testing.TB) *answerSets {
	t.Helper()
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
	s := &answerSets{}
	add := func(dst *[]FeatureRow, order *[]string, name string, items []eval.Item) {
		rows, err := AnswerabilityRows(e, items)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			rows[i].Set = name
		}
		*dst = append(*dst, rows...)
		*order = append(*order, name)
	}
	for _, set := range []string{"dl19", "dl21"} {
		d, err := eval.LoadTREC(dir, set)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{5, 10, 20} {
			add(&s.scored, &s.scoredOrder, fmt.Sprintf("%s@%d", set, k), d.AnswerRemovedItems(k))
		}
	}
	for _, lang := range eval.NoMIRACLLangs {
		recs, err := eval.LoadNoMIRACL(dir, lang)
		if err != nil {
			t.Fatal(err)
		}
		add(&s.text, &s.textOrder, "nomiracl-"+lang, eval.NoMIRACLItems(recs))
	}
	clap, err := eval.LoadClapNQ(dir)
	if err != nil {
		t.Fatal(err)
	}
	add(&s.text, &s.textOrder, "clapnq", eval.ClapNQItems(clap))
	return s
}

func tuneRows(rows []FeatureRow) []FeatureRow {
	var out []FeatureRow
	for _, r := range rows {
		if r.Tune {
			out = append(out, r)
		}
	}
	return out
}

// cvFold puts a query in one of k folds by a hash of its set family and
// id, so that the requests of one query (TREC: both labels, every k) always
// share a fold. rep varies the assignment between repeats.
func cvFold(r FeatureRow, k, rep int) int {
	family := r.Set
	if i := strings.IndexByte(family, '@'); i >= 0 {
		family = family[:i]
	}
	return int(uint64(hash64(fmt.Sprintf("cv%d:%s:%s", rep, family, r.ID))) % uint64(k))
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

// crossValidate is the out-of-fold AUROC per set of a feature list over
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
			m, err := Fit(names, train, answerL2)
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

// answerL2 is the penalty on standardised weights every fit here uses.
const answerL2 = 1e-3

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

// TestAnswerabilityCandidates logs, for each family, every feature alone
// (tune AUROC, no fitting) and the cross-validated candidate lists the
// choice was made among. It reads the tune halves only.
func TestAnswerabilityCandidates(t *testing.T) {
	s := loadAnswerSets(t)
	for _, fam := range []struct {
		name  string
		rows  []FeatureRow
		order []string
		cands [][]string
	}{
		{"scored", tuneRows(s.scored), s.scoredOrder, [][]string{
			{"retriever_agreement"},
			{"retriever_agreement", "term_coverage_mean"},
			ScoredFeatures,
			{"retriever_agreement", "term_coverage_mean", "lexical_spread", "semantic_spread"},
			{"retriever_agreement", "term_coverage_mean", "lexical_spread", "answer_coverage"},
			{"retriever_agreement", "term_coverage_mean", "lexical_spread", "term_coverage_best"},
			{"retriever_agreement", "answer_coverage", "doc_concentration"},
		}},
		{"text", tuneRows(s.text), s.textOrder, [][]string{
			{"answer_coverage"},
			TextFeatures,
			{"answer_coverage", "doc_concentration", "term_coverage_mean"},
			{"answer_coverage", "doc_concentration", "term_coverage_best"},
			{"term_coverage_best", "term_coverage_mean", "doc_concentration"},
		}},
	} {
		t.Logf("%s family, tune halves: sets %s", fam.name, strings.Join(fam.order, " "))
		for _, f := range gate.FeatureNames {
			sc := make([]float64, len(fam.rows))
			for i, r := range fam.rows {
				sc[i] = r.F[f]
			}
			t.Log(cvLine("alone: "+f, fam.order, aurocBySet(fam.rows, sc)))
		}
		for _, c := range fam.cands {
			t.Log(cvLine("cv: "+strings.Join(c, "+"), fam.order, crossValidate(t, c, fam.rows)))
		}
	}
}

// fitDefault fits the two models of the default policy on the tune halves.
func fitDefault(t testing.TB, s *answerSets) (text, scored *Model) {
	var err error
	if text, err = Fit(TextFeatures, tuneRows(s.text), answerL2); err != nil {
		t.Fatal(err)
	}
	if scored, err = Fit(ScoredFeatures, tuneRows(s.scored), answerL2); err != nil {
		t.Fatal(err)
	}
	return text, scored
}

// TestAnswerabilityWeights refits the default policy's answerability models
// and its operating point on the tune halves, and fails when
// policies/default.json drifts from what the data gives (to 4 decimals, as
// the policy writes them).
func TestAnswerabilityWeights(t *testing.T) {
	s := loadAnswerSets(t)
	text, scored := fitDefault(t, s)
	op := chooseOperatingPoint(s, text, scored)
	text.B, scored.B = op.TextBias, op.ScoredBias
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
		for i, u := range c.got.Used {
			if u {
				used--
				_ = i
			}
		}
		if used != 0 {
			t.Errorf("%s: the policy weights features the fit does not", c.name)
		}
	}
	b := e.Policy().Bands
	if len(b) != 3 || b[0].Action != gate.ActionInject || b[1].Action != gate.ActionCaveat || b[2].Action != gate.ActionRefuse {
		t.Fatalf("default bands should be inject / caveat / refuse: %+v", b)
	}
	if b[0].Min != op.InjectMin || b[1].Min != answerBand {
		t.Errorf("default.json bands inject %.2f caveat %.2f; the tune halves give %.2f %.2f", b[0].Min, b[1].Min, op.InjectMin, answerBand)
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

// TestAnswerabilityCurves logs, on the tune halves, the error and
// hallucination rates of answering at each threshold of the default
// policy's confidence, for the sets the operating point is chosen on.
func TestAnswerabilityCurves(t *testing.T) {
	s := loadAnswerSets(t)
	text, scored := fitDefault(t, s)
	prob := func(m *Model, r FeatureRow) float64 { return 1 / (1 + math.Exp(-m.Logit(m.Row(r.F)))) }
	groups := map[string][]FeatureRow{}
	for _, r := range tuneRows(s.scored) {
		groups[r.Set] = append(groups[r.Set], r)
	}
	for _, r := range tuneRows(s.text) {
		g := "clapnq"
		if strings.HasPrefix(r.Set, "nomiracl") {
			g = "nomiracl"
		}
		groups[g] = append(groups[g], r)
	}
	for _, g := range []string{"dl19@10", "dl21@10", "dl19@5", "dl21@5", "dl19@20", "dl21@20", "nomiracl", "clapnq"} {
		m := scored
		if g == "nomiracl" || g == "clapnq" {
			m = text
		}
		line := g + ":"
		for th := 0.20; th < 0.81; th += 0.05 {
			var p eval.PR
			for _, r := range groups[g] {
				p.Add(prob(m, r) >= th, r.Label)
			}
			line += fmt.Sprintf(" %.2f:%2.0f/%2.0f", th, 100*p.ErrorRate(), 100*p.HallucinationRate())
		}
		t.Log(line)
	}
}

// The default policy's operating point, chosen on the tune halves:
//   - each model's answer threshold is the highest (on a grid of 0.005)
//     whose error rate (answerable requests withheld) stays within its
//     target: maxScoredError on DL19 and DL21 answer-removed at k = 10,
//     pooled (each alone has some 23 answerable tune queries, so one query
//     moves its error rate by 4 points), maxTextError on NoMIRACL pooled
//     over its nine languages.
//     Each model's bias is then shifted by −logit(threshold), so that both
//     answer at answerBand, the caveat band's min;
//   - the inject band's min is the lowest value on a grid of 0.05 above
//     answerBand where each family's tune hallucination rate among the
//     requests it would inject is at most maxInjectHallucination.
const (
	maxScoredError         = 0.10
	maxTextError           = 0.15
	maxInjectHallucination = 0.10
	answerBand             = 0.5
)

// OperatingPoint is what the tune halves give for the bands.
type OperatingPoint struct {
	ScoredThreshold, TextThreshold float64 // on each fitted model's own probability
	ScoredBias, TextBias           float64 // the fitted biases shifted to answer at answerBand
	InjectMin                      float64
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
func logit(p float64) float64   { return math.Log(p / (1 - p)) }

// highestWithin is the highest threshold on the grid whose error rate over
// every group stays at most maxErr.
func highestWithin(m *Model, groups [][]FeatureRow, maxErr float64) float64 {
	best := 0.0
	for i := 1; i < 200; i++ {
		th := float64(i) / 200
		ok := true
		for _, g := range groups {
			var p eval.PR
			for _, r := range g {
				p.Add(sigmoid(m.Logit(m.Row(r.F))) >= th, r.Label)
			}
			ok = ok && p.ErrorRate() <= maxErr
		}
		if ok {
			best = th
		}
	}
	return best
}

func chooseOperatingPoint(s *answerSets, text, scored *Model) OperatingPoint {
	by := map[string][]FeatureRow{}
	for _, r := range tuneRows(s.scored) {
		by[r.Set] = append(by[r.Set], r)
	}
	var nm []FeatureRow
	for _, r := range tuneRows(s.text) {
		if strings.HasPrefix(r.Set, "nomiracl") {
			nm = append(nm, r)
		}
	}
	op := OperatingPoint{
		ScoredThreshold: highestWithin(scored, [][]FeatureRow{append(append([]FeatureRow{}, by["dl19@10"]...), by["dl21@10"]...)}, maxScoredError),
		TextThreshold:   highestWithin(text, [][]FeatureRow{nm}, maxTextError),
	}
	op.ScoredBias = scored.B - logit(op.ScoredThreshold)
	op.TextBias = text.B - logit(op.TextThreshold)
	shift := func(m *Model, b float64) *Model { c := *m; c.B = b; return &c }
	fams := []struct {
		m    *Model
		rows []FeatureRow
	}{{shift(scored, op.ScoredBias), tuneRows(s.scored)}, {shift(text, op.TextBias), tuneRows(s.text)}}
	op.InjectMin = math.NaN()
	for v := 0.55; v < 0.99; v += 0.05 {
		v = math.Round(v*100) / 100
		ok := true
		for _, f := range fams {
			var p eval.PR
			for _, r := range f.rows {
				p.Add(sigmoid(f.m.Logit(f.m.Row(r.F))) >= v, r.Label)
			}
			ok = ok && p.HallucinationRate() <= maxInjectHallucination
		}
		if ok {
			op.InjectMin = v
			break
		}
	}
	return op
}

func TestAnswerabilityOperatingPoint(t *testing.T) {
	s := loadAnswerSets(t)
	text, scored := fitDefault(t, s)
	op := chooseOperatingPoint(s, text, scored)
	t.Logf("tune gives: scored answers at p >= %.3f (bias %.4f), text at p >= %.3f (bias %.4f); inject >= %.2f",
		op.ScoredThreshold, op.ScoredBias, op.TextThreshold, op.TextBias, op.InjectMin)
}

func TestAnswerabilityRanges(t *testing.T) {
	s := loadAnswerSets(t)
	for _, fam := range []struct {
		name string
		rows []FeatureRow
	}{{"scored", tuneRows(s.scored)}, {"text", tuneRows(s.text)}} {
		for _, f := range gate.FeatureNames {
			var pos, neg []float64
			for _, r := range fam.rows {
				if r.Label {
					pos = append(pos, r.F[f])
				} else {
					neg = append(neg, r.F[f])
				}
			}
			sort.Float64s(pos)
			sort.Float64s(neg)
			q := func(x []float64, p float64) float64 { return x[int(p*float64(len(x)-1))] }
			t.Logf("%s %-20s pos min %.3f p05 %.3f p50 %.3f p95 %.3f max %.3f | neg min %.3f p05 %.3f p50 %.3f p95 %.3f max %.3f",
				fam.name, f, pos[0], q(pos, .05), q(pos, .5), q(pos, .95), pos[len(pos)-1], neg[0], q(neg, .05), q(neg, .5), q(neg, .95), neg[len(neg)-1])
		}
	}
}
