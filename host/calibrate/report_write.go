package calibrate

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteMarkdown writes the report for people: the guarantee first, then
// the examples behind it, the models, how the bound was computed, the
// rates and the held-out AUROC.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Calibration report: %s %s\n\n", r.Policy.Name, r.Policy.Version)
	p("Calibrated from %s %s (sha256 `%s`); written policy sha256 `%s`.\n\n", r.Base.Name, r.Base.Version, short(r.Base.SHA256), short(r.Policy.SHA256))
	p("**Guarantee.** %s\n\n", r.Bound.Statement)
	p("It assumes the calibration examples and future requests are exchangeable: drawn the same way, from the same " +
		"retriever, corpus and mix of questions, and labeled by the same rule. It bounds the rate over many future " +
		"requests, not any single answer; it does not survive a change of retriever, corpus or traffic (calibrate again).\n\n")

	p("## Examples\n\n")
	ec := r.Examples
	if ec.Duplicates > 0 {
		p("%d examples, of which %d repeat another exactly (the same request, the same label) and are left out: ", ec.Examples, ec.Duplicates)
	}
	p("%d examples (%d labeled 1, %d labeled 0) in %d independent groups (examples sharing a group or a request count once); seed %d.\n",
		ec.Positive+ec.Negative, ec.Positive, ec.Negative, ec.Groups, r.Seed)
	if r.FitJoinedCalibration {
		p("No model could be fitted on the fit split (too few examples of a label for even one weight), so its examples joined the calibration split and the base's weights were kept.\n")
	}
	p("\n| split | examples | labeled 1 | labeled 0 | used for |\n|---|--:|--:|--:|---|\n")
	use := map[string]string{"fit": "fitting the weights", "calibration": "choosing the threshold (the bound)", "test": "reporting only"}
	for _, s := range r.Splits {
		p("| %s | %d | %d | %d | %s |\n", s.Split, s.Examples, s.Positive, s.Negative, use[s.Split])
	}

	p("\n## Models\n\n")
	p("| model | fit examples (1 / 0) | result |\n|---|--:|---|\n")
	for _, m := range r.Models {
		p("| %s | %d / %d | %s |\n", m.Model, m.Positive, m.Negative, m.Note)
	}
	for _, m := range r.Models {
		if !m.Fitted && len(m.CV) == 0 {
			continue
		}
		if m.Fitted {
			p("\n%s model, fitted (before the threshold moved its bias; L2 %.3g): bias %s", m.Model, m.L2, num(m.Bias))
			names := make([]string, 0, len(m.Weights))
			for n := range m.Weights {
				names = append(names, n)
			}
			sort.Slice(names, func(a, c int) bool { return featureIndex(names[a]) < featureIndex(names[c]) })
			for _, n := range names {
				p(", %s %s", n, num(m.Weights[n]))
			}
			p(".\n")
		} else {
			p("\n%s model: the base's weights, the threshold only.\n", m.Model)
		}
		if len(m.CV) > 0 {
			p("\n| form | cross-validated log-loss |\n|---|--:|\n")
			for _, c := range m.CV {
				mark := ""
				if c.Chosen {
					mark = " (chosen)"
				}
				p("| %s%s | %s |\n", c.Model, mark, fmtF(c.Loss, 4))
			}
		}
	}
	s := r.Saturations
	p("\nSaturations: bm25 %s (%s), sparse %s (%s).\n", num(s.BM25), satNote(s.BM25FromData, s.BaseBM25), num(s.Sparse), satNote(s.SparseFromData, s.BaseSparse))
	if s.VectorFromData {
		p("Vector level: top_vector = sigmoid((s - %s)/%s), the fit split's median best vector similarity and its spread.\n", num(s.VectorCenter), num(s.VectorScale))
	}

	bd := r.Bound
	p("\n## The bound\n\n")
	p("%s.\n\n", bd.Method)
	side := "answered"
	label := 0
	if bd.Rate == "error" {
		side, label = "withheld", 1
	}
	p("- %d independent calibration examples labeled %d", bd.N, label)
	if bd.Examples != bd.N {
		p(" (groups holding %d examples of that label; a group counts as %s when any of them is)", bd.Examples, side)
	}
	p("; at the chosen threshold %d of them are %s; p = P(Binomial(%d, %s) <= %d) = %s <= delta = %s.\n",
		bd.K, side, bd.N, show(bd.Alpha), bd.K, fmtG(bd.PValue), show(bd.Delta))
	p("- With %d such examples the test lets at most %d through; any guarantee at this bound and confidence needs at least %d.\n", bd.N, bd.MaxK, bd.MinN)
	p("- %d of %d candidate thresholds tested", bd.Tested, bd.Candidates)
	if bd.Stopped {
		p("; the next one would have %s %d (p = %s > %s), so the sequence stopped there", side, bd.NextK, fmtG(bd.NextPValue), show(bd.Delta))
	}
	p(".\n")
	p("- The threshold is a fitted probability of %s that the evidence answers; the written policy's biases are moved so that it lands on %s, the answering band's min",
		fmtF(bd.Threshold, 3), num(bd.AnswerMin))
	if bd.InjectMin >= 0 && bd.InjectMin != bd.AnswerMin {
		p(" (the inject band keeps its min, %s: the same distance in log-odds above the threshold as in the base)", num(bd.InjectMin))
	}
	p(".\n")

	p("\n## Rates at the chosen threshold\n\n")
	p("Through the gate with the written policy. Answered = inject or caveat.\n\n")
	p("| split | hallucination (answered / labeled 0) | error (withheld / labeled 1) | coverage | injected / labeled 0 |\n|---|--:|--:|--:|--:|\n")
	for _, s := range r.Splits {
		name := s.Split
		if name == "fit" && !r.FitJoinedCalibration {
			name += " (in-sample)"
		}
		p("| %s | %s (%d/%d) | %s (%d/%d) | %s | %s (%d/%d) |\n", name,
			fmtF(s.Hallucination(), 3), s.AnsweredNegative, s.Negative,
			fmtF(s.Error(), 3), s.Positive-s.AnsweredPositive, s.Positive,
			fmtF(s.Coverage(), 3),
			fmtF(s.InjectHallucination(), 3), s.InjectedNegative, s.Negative)
	}

	a := r.AUROC
	p("\n## Held-out AUROC\n\n")
	p("Over the %d examples the weights were not fitted on (%d labeled 1, %d labeled 0), with DeLong 95%% intervals; the difference is paired.\n\n", a.Positive+a.Negative, a.Positive, a.Negative)
	p("| | AUROC |\n|---|---|\n")
	p("| calibrated | %s |\n| base | %s |\n| difference | %s |\n", fmtI(a.Policy), fmtI(a.Base), fmtI(a.Diff))
	_, err := io.WriteString(w, b.String())
	return err
}

func satNote(fromData bool, base float64) string {
	if fromData {
		return "the fit split's median best score; the base has " + num(base)
	}
	return "the base's"
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func fmtF(x float64, prec int) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.*f", prec, x)
}

func fmtG(x float64) string { return fmt.Sprintf("%.3g", x) }

func fmtI(i Interval) string {
	if math.IsNaN(i.Value) {
		return "n/a"
	}
	if math.IsNaN(i.Lo) {
		return fmt.Sprintf("%.3f (no interval: too few examples)", i.Value)
	}
	return fmt.Sprintf("%.3f (%.3f to %.3f)", i.Value, i.Lo, i.Hi)
}
