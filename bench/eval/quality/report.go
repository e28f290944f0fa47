package quality

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/bench/eval"
	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/policies"
)

// K is the number of hybrid passages per DL19 request.
const K = 20

// SmallK are the smaller request sizes the DL19 chunk score is also
// measured at: hosts often send fewer than K chunks, and a per-chunk score
// relative to the request can move with k.
var SmallK = []int{5, 10}

// Targets on the held-out halves, with the committed default.
const (
	TargetClapNQ          = 0.82 // ClapNQ query AUROC (no regression)
	TargetRemovedK10      = 0.80 // every answer-removed family at k = 10
	TargetMaxError        = 0.20 // every family, at the operating point
	TargetRemovedHalluc   = 0.55 // every answer-removed family at k = 10, at the operating point
	TargetClapNQHalluc    = 0.50
	TargetNoMIRACLHalluc  = 0.80 // nine languages pooled
	TargetNoMIRACLMean    = 0.70 // mean AUROC over the nine languages
	TargetNoMIRACLMargin  = 0.02 // every language over its max-coverage baseline by this
	TargetCalibrateSplits = 4    // of CalibrateSplits, the calibrated policy's AUROC >= the default's
)

// RemovedK are the request sizes of the answer-removed families.
var RemovedK = eval.RemovedK

// Group is one query-level labeled set, split into halves.
type Group struct {
	Name       string // "dl19@10", "nomiracl-es", "clapnq"
	Tune, Held []eval.Item
}

// PolicyResult is one policy's figures.
type PolicyResult struct {
	Name string
	// Query holds the query-level figures per group: [0] tune, [1] held out.
	Query map[string][2]SetResult
	// NoMIRACLHeld pools the nine languages' held-out halves (rates).
	NoMIRACLHeld, NoMIRACLTune SetResult
	DL19Tune, DL19Held         SetResult // passages, hybrid top K
	// ChunkAUROCAtK is the held-out DL19 chunk AUROC at each of SmallK.
	ChunkAUROCAtK []float64
	// HeldConf is each group's held-out confidences, in item order.
	HeldConf map[string][]float64
}

// Report is everything docs/quality.md shows.
type Report struct {
	Groups    []Group
	Baselines []eval.Baseline            // passage level and ClapNQ (eval.Baselines)
	QueryBase map[string][]eval.Baseline // group -> single query-level signals
	Policies  []PolicyResult
	DL19Count [2]int // DL19 passage-level queries: tune, held
	// RawVectorAtK is raw ada-002's held-out chunk AUROC at each of SmallK:
	// the single signal the default must not fall below at any request size.
	RawVectorAtK []float64
	// Features is each answerability feature alone (tune AUROC) per group.
	Features map[string]map[string]float64
	// Calibrate is calibration to half of each answer-removed family.
	Calibrate []CalibrateResult
}

// loadGroups builds every query-level set: each answer-removed family at
// each k, NoMIRACL language by language, ClapNQ.
func loadGroups(dataDir string) ([]Group, *eval.TREC, []eval.ClapNQ, error) {
	var gs []Group
	add := func(name string, items []eval.Item) {
		gs = append(gs, Group{Name: name, Tune: eval.Half(items, true), Held: eval.Half(items, false)})
	}
	trec := eval.LoadTRECOnce(dataDir)
	for _, p := range eval.RemovedPairs {
		d, err := trec(p.Set)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, k := range RemovedK {
			add(p.At(k), d.AnswerRemovedPairItems(k, p.Second))
		}
	}
	var nomiracl []eval.Item
	for _, lang := range eval.NoMIRACLLangs {
		recs, err := eval.LoadNoMIRACL(dataDir, lang)
		if err != nil {
			return nil, nil, nil, err
		}
		items := eval.NoMIRACLItems(recs)
		nomiracl = append(nomiracl, items...)
		add("nomiracl-"+lang, items)
	}
	clap, err := eval.LoadClapNQ(dataDir)
	if err != nil {
		return nil, nil, nil, err
	}
	add("clapnq", eval.ClapNQItems(clap))
	add("offtopic-clapnq", eval.OffTopicItems("offtopic-clapnq", eval.ClapNQItems(clap)))
	add("offtopic-nomiracl", eval.OffTopicItems("offtopic-nomiracl", nomiracl))
	dl19, err := trec("dl19")
	if err != nil {
		return nil, nil, nil, err
	}
	return gs, dl19, clap, nil
}

// Evaluate loads the data and runs every preset.
func Evaluate(dataDir string) (*Report, error) {
	groups, d, clap, err := loadGroups(dataDir)
	if err != nil {
		return nil, err
	}
	dt, dh := eval.Half(d.DL19Items(K), true), eval.Half(d.DL19Items(K), false)
	rep := &Report{Groups: groups, Baselines: eval.Baselines(d, clap, K), DL19Count: [2]int{len(dt), len(dh)},
		QueryBase: map[string][]eval.Baseline{}, Features: map[string]map[string]float64{}}
	for _, g := range groups {
		rep.QueryBase[g.Name] = eval.QueryBaselines(g.Name, append(append([]eval.Item{}, g.Tune...), g.Held...))
	}
	for _, name := range policies.Names() {
		js, _ := policies.Get(name)
		e, err := gate.NewEngine(js)
		if err != nil {
			return nil, errorf("policy "+name, err)
		}
		pr := PolicyResult{Name: name, Query: map[string][2]SetResult{}, HeldConf: map[string][]float64{}}
		var nmTune, nmHeld []eval.Item
		var nmOutT, nmOutH []Outcome
		for _, g := range groups {
			var res [2]SetResult
			for h, items := range [][]eval.Item{g.Tune, g.Held} {
				outs, err := Run(e, items)
				if refusesMetric(err) {
					// A preset that decides by cosine levels refuses
					// scores without one (wikigr and dot products): it
					// cannot serve that retriever, and says so.
					res[h] = SetResult{Refused: err.Error(), AUROC: math.NaN()}
					continue
				}
				if err != nil {
					return nil, errorf("policy "+name+", "+g.Name, err)
				}
				res[h] = Measure(items, outs)
				if h == 1 {
					for _, o := range outs {
						pr.HeldConf[g.Name] = append(pr.HeldConf[g.Name], o.Confidence)
					}
				}
				if strings.HasPrefix(g.Name, "nomiracl-") {
					if h == 0 {
						nmTune, nmOutT = append(nmTune, items...), append(nmOutT, outs...)
					} else {
						nmHeld, nmOutH = append(nmHeld, items...), append(nmOutH, outs...)
					}
				}
			}
			pr.Query[g.Name] = res
		}
		pr.NoMIRACLTune, pr.NoMIRACLHeld = Measure(nmTune, nmOutT), Measure(nmHeld, nmOutH)
		for _, x := range []struct {
			items []eval.Item
			dst   *SetResult
		}{{dt, &pr.DL19Tune}, {dh, &pr.DL19Held}} {
			outs, err := Run(e, x.items)
			if err != nil {
				return nil, errorf("policy "+name, err)
			}
			*x.dst = Measure(x.items, outs)
		}
		for _, k := range SmallK {
			items := eval.Half(d.DL19Items(k), false)
			outs, err := Run(e, items)
			if err != nil {
				return nil, errorf("policy "+name, err)
			}
			pr.ChunkAUROCAtK = append(pr.ChunkAUROCAtK, Measure(items, outs).ChunkAUROC)
		}
		rep.Policies = append(rep.Policies, pr)
	}
	for _, k := range SmallK {
		for _, b := range eval.Baselines(d, clap, k) {
			if b.Signal == "raw vector" && b.Level == "passage (hybrid top k)" {
				rep.RawVectorAtK = append(rep.RawVectorAtK, b.Held)
			}
		}
	}
	if err := rep.measureFeatures(); err != nil {
		return nil, err
	}
	if err := rep.runCalibrate(); err != nil {
		return nil, err
	}
	return rep, nil
}

// measureFeatures is every answerability feature alone on each group's
// tune half: what the default's models were chosen among.
func (r *Report) measureFeatures() error {
	e, err := gate.NewEngine(policies.Default())
	if err != nil {
		return err
	}
	for _, g := range r.Groups {
		vals := map[string][]float64{}
		var labels []bool
		for _, it := range g.Tune {
			fs, err := e.Features(ToGate(it.Req))
			if err != nil {
				return err
			}
			for _, f := range fs {
				vals[f.Name] = append(vals[f.Name], f.Value)
			}
			labels = append(labels, it.Answerable)
		}
		r.Features[g.Name] = map[string]float64{}
		for n, v := range vals {
			r.Features[g.Name][n] = eval.AUROC(v, labels)
		}
	}
	return nil
}

type wrapped struct {
	ctx string
	err error
}

func (w *wrapped) Error() string { return w.ctx + ": " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

func errorf(ctx string, err error) error { return &wrapped{ctx, err} }

// Files renders docs/quality.md and its plots, keyed by path from the
// repository root.
func (r *Report) Files() map[string][]byte {
	files := map[string][]byte{}
	var clapS, dlS, remS, nmS []eval.Series
	def := r.policy("default")
	for _, p := range r.Policies {
		clapS = append(clapS, curveSeries(p.Name, p.Query["clapnq"][1].Curve, false))
		dlS = append(dlS, curveSeries(p.Name, p.DL19Held.ChunkCurve, false))
		nmS = append(nmS, curveSeries(p.Name, p.NoMIRACLHeld.Curve, false))
	}
	if def != nil {
		for i, pr := range eval.RemovedPairs {
			remS = append(remS, curveSeries("default, "+pr.Title(), def.Query[pr.At(10)][1].Curve, i%2 == 1))
		}
	}
	files["docs/quality-clapnq.svg"] = eval.Plot{Title: "ClapNQ held-out: accuracy of answered vs coverage (from 5%)",
		XLabel: "coverage (fraction answered, most confident first)", YLabel: "accuracy (answerable among answered)", YMin: 0.4, Series: clapS}.SVG()
	files["docs/quality-dl19.svg"] = eval.Plot{Title: "DL19 held-out: precision of kept vs passages kept (from 5%)",
		XLabel: "fraction of passages kept (highest chunk score first)", YLabel: "precision (rel >= 2)", YMin: 0.2, Series: dlS}.SVG()
	files["docs/quality-removed.svg"] = eval.Plot{Title: "Answer removed, k = 10, held-out: accuracy of answered vs coverage",
		XLabel: "coverage (fraction answered, most confident first)", YLabel: "accuracy (answerable among answered)", YMin: 0.3, Series: remS}.SVG()
	files["docs/quality-nomiracl.svg"] = eval.Plot{Title: "NoMIRACL, nine languages pooled, held-out: accuracy vs coverage",
		XLabel: "coverage (fraction answered, most confident first)", YLabel: "accuracy (answerable among answered)", YMin: 0.3, Series: nmS}.SVG()
	if def != nil {
		files["docs/quality-reliability.svg"] = r.reliabilityPlot(def)
	}
	files["docs/quality.md"] = []byte(r.markdown())
	return files
}

// reliabilityPlot is the default's reliability diagram on the held-out
// halves: each answer-removed pair pooled over k, NoMIRACL pooled over its
// languages, ClapNQ; a bin is drawn when it holds at least 5 requests.
func (r *Report) reliabilityPlot(def *PolicyResult) []byte {
	series := []eval.Series{{Name: "perfect calibration", X: []float64{0, 1}, Y: []float64{0, 1}, Dashed: true}}
	add := func(name string, bins []Bin) {
		s := eval.Series{Name: name}
		for _, b := range bins {
			if b.N >= 5 {
				s.X, s.Y = append(s.X, b.Conf), append(s.Y, b.Answerable)
			}
		}
		series = append(series, s)
	}
	for _, pr := range eval.RemovedPairs {
		var items []eval.Item
		var conf []float64
		for _, k := range RemovedK {
			items = append(items, r.group(pr.At(k)).Held...)
			conf = append(conf, def.HeldConf[pr.At(k)]...)
		}
		add(pr.Title(), pooledBins(items, conf))
	}
	var items []eval.Item
	var conf []float64
	for _, g := range r.nomiracl() {
		items = append(items, r.group(g).Held...)
		conf = append(conf, def.HeldConf[g]...)
	}
	add("NoMIRACL, nine languages", pooledBins(items, conf))
	add("ClapNQ", def.Query["clapnq"][1].Bins)
	return eval.Plot{Title: "The default's confidence, held out: share answerable by confidence bin",
		XLabel: "mean confidence in the bin", YLabel: "share of requests whose evidence holds the answer", YMin: 0, Series: series}.SVG()
}

func pooledBins(items []eval.Item, conf []float64) []Bin {
	labels := make([]bool, len(items))
	for i, it := range items {
		labels[i] = it.Answerable
	}
	b, _ := Reliability(conf, labels)
	return b
}

func curveSeries(name string, pts []eval.CurvePoint, dashed bool) eval.Series {
	s := eval.Series{Name: name, Dashed: dashed}
	// Below 5% coverage a point is a handful of examples: plotting it only
	// draws noise.
	for _, p := range pts {
		if p.Coverage >= 0.05 {
			s.X, s.Y = append(s.X, p.Coverage), append(s.Y, p.Accuracy)
		}
	}
	return s
}

func f(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return strconv.FormatFloat(100*x, 'f', 1, 64) + "%"
}

func itoa(n int) string { return strconv.Itoa(n) }

func (r *Report) policy(name string) *PolicyResult {
	for i := range r.Policies {
		if r.Policies[i].Name == name {
			return &r.Policies[i]
		}
	}
	return nil
}

func (r *Report) findBaseline(set, signal string) *eval.Baseline {
	for i := range r.Baselines {
		if b := &r.Baselines[i]; b.Set == set && b.Signal == signal && b.Level != "passage (own top 20)" {
			return b
		}
	}
	return nil
}

func (r *Report) baseline(set, signal string) string {
	if b := r.findBaseline(set, signal); b != nil {
		return f(b.Held)
	}
	return "n/a"
}

func (r *Report) baselineTune(set, signal string) string {
	if b := r.findBaseline(set, signal); b != nil {
		return f(b.Tune)
	}
	return "n/a"
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// refusesMetric tells whether err is a policy's refusal of a request's
// vector_metric.
func refusesMetric(err error) bool {
	var ge *gate.Error
	return errors.As(err, &ge) && ge.Code == gate.CodeBadField && ge.Field == "vector_metric"
}
