package experimental

import (
	"math"
	"sort"

	"github.com/ctxgate/ctxgate/bench/eval"
	"github.com/ctxgate/ctxgate/gate"
)

// AnswerSets are the labeled sets the answerability models are fitted and
// chosen on, by model: the scored model on the answer-removed families,
// the text model on NoMIRACL and ClapNQ. Rows whose request the other
// model decides (an answer-removed request whose best chunk covers less
// than scored_min_term_coverage of the question) go with the model that
// decides them.
type AnswerSets struct {
	Scored, Text []FeatureRow
	// Families are every family's name in report order, answer-removed
	// first.
	Families []string
	// TuneSize is each family's number of tune rows, over both models.
	TuneSize map[string]int
}

// LoadAnswerSets builds every family's rows through the core under policy
// e (its answerability features, and which model decides).
func LoadAnswerSets(dataDir string, e *gate.Engine) (*AnswerSets, error) {
	s := &AnswerSets{TuneSize: map[string]int{}}
	add := func(name string, items []eval.Item) error {
		rows, err := AnswerabilityRows(e, name, items)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if r.Tune {
				s.TuneSize[name]++
			}
			if r.Scored {
				s.Scored = append(s.Scored, r)
			} else {
				s.Text = append(s.Text, r)
			}
		}
		s.Families = append(s.Families, name)
		return nil
	}
	trec := eval.LoadTRECOnce(dataDir)
	for _, p := range eval.RemovedPairs {
		d, err := trec(p.Set)
		if err != nil {
			return nil, err
		}
		for _, k := range eval.RemovedK {
			if err := add(p.At(k), d.AnswerRemovedPairItems(k, p.Second)); err != nil {
				return nil, err
			}
		}
	}
	var nomiracl []eval.Item
	for _, lang := range eval.NoMIRACLLangs {
		recs, err := eval.LoadNoMIRACL(dataDir, lang)
		if err != nil {
			return nil, err
		}
		items := eval.NoMIRACLItems(recs)
		nomiracl = append(nomiracl, items...)
		if err := add("nomiracl-"+lang, items); err != nil {
			return nil, err
		}
	}
	clap, err := eval.LoadClapNQ(dataDir)
	if err != nil {
		return nil, err
	}
	if err := add("clapnq", eval.ClapNQItems(clap)); err != nil {
		return nil, err
	}
	if err := add("offtopic-clapnq", eval.OffTopicItems("offtopic-clapnq", eval.ClapNQItems(clap))); err != nil {
		return nil, err
	}
	if err := add("offtopic-nomiracl", eval.OffTopicItems("offtopic-nomiracl", nomiracl)); err != nil {
		return nil, err
	}
	return s, nil
}

// TuneRows are the rows of the tune halves.
func TuneRows(rows []FeatureRow) []FeatureRow {
	var out []FeatureRow
	for _, r := range rows {
		if r.Tune {
			out = append(out, r)
		}
	}
	return out
}

// AnswerL2 is the penalty on standardised weights every fit here uses.
const AnswerL2 = 1e-3

// FitDefault fits the default policy's two models on the tune halves.
func FitDefault(s *AnswerSets) (text, scored *Model, err error) {
	if text, err = Fit(TextFeatures, TuneRows(s.Text), AnswerL2, s.TuneSize); err != nil {
		return nil, nil, err
	}
	if scored, err = Fit(ScoredFeatures, TuneRows(s.Scored), AnswerL2, s.TuneSize); err != nil {
		return nil, nil, err
	}
	return text, scored, nil
}

// The default policy's operating point, chosen once on the tune halves, on
// the one confidence scale both models share (each a calibrated
// probability that the evidence holds the answer):
//   - the caveat band's min, from which the gate answers, is the highest
//     value on a grid of 0.01 at which every family's tune error rate
//     (answerable requests withheld) stays at or below MaxFamilyError:
//     within that limit, the fewest unanswerable requests are answered;
//   - the inject band starts at InjectMin, 0.5: where the evidence more
//     likely than not holds the answer, the gate answers from it plainly;
//     below, down to the caveat band, it answers and says the answer
//     rests on limited information. A calibrated probability makes that
//     line a meaning rather than a fit.
const (
	MaxFamilyError = 0.15
	InjectMin      = 0.5
)

// Bands are the operating point: the caveat and inject bands' mins.
type Bands struct {
	Caveat, Inject float64
	// Binding is the family whose error limit sets Caveat.
	Binding string
}

// Scored is each row's confidence under the fitted models.
type Scored struct {
	Row  FeatureRow
	Conf float64
}

// Confidences gives every row its model's probability.
func Confidences(s *AnswerSets, text, scored *Model) []Scored {
	var out []Scored
	for _, r := range s.Scored {
		out = append(out, Scored{r, scored.Prob(r)})
	}
	for _, r := range s.Text {
		out = append(out, Scored{r, text.Prob(r)})
	}
	return out
}

// ChooseBands applies the rule above to the tune halves.
func ChooseBands(conf []Scored) Bands {
	byFam := map[string][]Scored{}
	for _, c := range conf {
		if c.Row.Tune {
			byFam[c.Row.Set] = append(byFam[c.Row.Set], c)
		}
	}
	var b Bands
	fams := make([]string, 0, len(byFam))
	for fam := range byFam {
		fams = append(fams, fam)
	}
	sort.Strings(fams)
	for i := 1; i < 100 && b.Binding == ""; i++ {
		th := float64(i) / 100
		for _, fam := range fams {
			var p eval.PR
			for _, c := range byFam[fam] {
				p.Add(c.Conf >= th, c.Row.Label)
			}
			if p.ErrorRate() > MaxFamilyError {
				b.Binding = fam // the first family over its limit
				break
			}
		}
		if b.Binding == "" {
			b.Caveat = th
		}
	}
	b.Inject = math.Max(InjectMin, b.Caveat)
	return b
}
