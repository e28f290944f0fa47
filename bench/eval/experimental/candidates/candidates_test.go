package candidates

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/bench/eval"
)

type set struct {
	name  string
	items []eval.Item
}

func loadSets(t *testing.T) []set {
	if os.Getenv("CTXGATE_EVAL_LONG") == "" {
		t.Skip("the candidate search takes a minute: CTXGATE_EVAL_LONG=1 to run it")
	}
	dir, err := eval.DataDirFrom(".")
	if errors.Is(err, eval.ErrNoData) {
		t.Skip("skipping: ../shared/data is absent")
	}
	if err != nil {
		t.Fatal(err)
	}
	var sets []set
	for _, name := range []string{"dl19", "dl21"} {
		d, err := eval.LoadTREC(dir, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{5, 10, 20} {
			sets = append(sets, set{fmt.Sprintf("%s-k%d", name, k), d.AnswerRemovedItems(k)})
		}
	}
	for _, l := range eval.NoMIRACLLangs {
		recs, err := eval.LoadNoMIRACL(dir, l)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, set{"nm-" + l, eval.NoMIRACLItems(recs)})
	}
	clap, err := eval.LoadClapNQ(dir)
	if err != nil {
		t.Fatal(err)
	}
	return append(sets, set{"clapnq", eval.ClapNQItems(clap)})
}

func buildRows(sets []set, pfx int, prefixes ...string) ([]row, []string) {
	var rows []row
	var order []string
	for _, s := range sets {
		ok := false
		for _, p := range prefixes {
			ok = ok || strings.HasPrefix(s.name, p)
		}
		if !ok {
			continue
		}
		order = append(order, s.name)
		grp := s.name
		if i := strings.Index(grp, "-k"); i > 0 {
			grp = grp[:i]
		}
		for _, it := range s.items {
			if it.Tune {
				rows = append(rows, row{set: s.name, grp: grp, id: it.ID, y: it.Answerable, f: features(it, pfx)})
			}
		}
	}
	return rows, order
}

// repeatedCV averages cvAUROC over three fold assignments.
func repeatedCV(rows []row, names []string) map[string]float64 {
	out := map[string]float64{}
	for r := 0; r < 3; r++ {
		foldSalt = r
		for k, v := range cvAUROC(rows, names, 5, 1e-3) {
			out[k] += v / 3
		}
	}
	foldSalt = 0
	return out
}

func line(label string, order []string, a map[string]float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-58s", label)
	sum := 0.0
	for _, s := range order {
		fmt.Fprintf(&b, " %.3f", a[s])
		sum += a[s]
	}
	fmt.Fprintf(&b, " | mean %.3f", sum/float64(len(order)))
	return b.String()
}

// TestCandidatesAlone logs every candidate feature's tune AUROC per set
// (suffix @0: exact matching; no suffix: terms folded to 5-rune prefixes;
// _t: the title's terms count as the text's).
func TestCandidatesAlone(t *testing.T) {
	sets := loadSets(t)
	rows, order := buildRows(sets, 5, "dl", "nm-", "clapnq")
	names := map[string]bool{}
	for _, r := range rows {
		for k := range r.f {
			names[k] = true
		}
	}
	var ns []string
	for k := range names {
		ns = append(ns, k)
	}
	sort.Strings(ns)
	t.Log(strings.Join(order, " "))
	for _, n := range ns {
		sc, lb := map[string][]float64{}, map[string][]bool{}
		for _, r := range rows {
			v, ok := r.f[n]
			if !ok || math.IsNaN(v) {
				v = -1e9
			}
			sc[r.set] = append(sc[r.set], v)
			lb[r.set] = append(lb[r.set], r.y)
		}
		a := map[string]float64{}
		for s := range sc {
			a[s] = eval.AUROC(sc[s], lb[s])
		}
		t.Log(line(n, order, a))
	}
}

// TestCandidateCombinations logs the cross-validated (tune) AUROC of the
// combinations compared for each family.
func TestCandidateCombinations(t *testing.T) {
	sets := loadSets(t)
	text, torder := buildRows(sets, 0, "nm-", "clapnq")
	for _, c := range [][]string{
		{"cov_max"},
		{"ac_logit"},
		{"ac_logit", "conc"},
		{"ac_logit", "conc", "doc_gain"},
		{"ac_logit", "conc", "cov_others", "n50_others"},
		{"ac_logit", "conc", "title_cov", "sent_cov"},
		{"ac_logit", "conc", "prox", "phrase"},
		{"ac_logit", "conc", "qnum", "num_ok"},
		{"ac_logit", "conc", "wcov_max"},
		{"ac_logit", "conc", "qterms"},
	} {
		t.Log(line("text: "+strings.Join(c, "+"), torder, repeatedCV(text, c)))
	}
	scored, sorder := buildRows(sets, 0, "dl")
	for _, c := range [][]string{
		{"both"},
		{"both", "cov_mean"},
		{"both", "cov_mean", "bm_cv"},
		{"both", "cov_mean", "best_sqrtlen"},
		{"both", "cov_mean", "tau"},
		{"both", "cov_mean", "sec_z"},
		{"both", "cov_mean", "sec_gap12"},
		{"both", "cov_mean", "x_min"},
		{"both_top5", "cov_mean"},
		{"both", "cov_mean", "logn"},
		{"both", "cov_mean", "sec_max"},
	} {
		t.Log(line("scored: "+strings.Join(c, "+"), sorder, repeatedCV(scored, c)))
	}
}
