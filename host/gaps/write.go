package gaps

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// WriteJSON writes the report as indented JSON. Field order is fixed by the
// struct declarations and every number is pre-rounded, so the same events give
// the same bytes.
func WriteJSON(w io.Writer, r *Report) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// WriteMarkdown writes the report as a ranked backlog: a summary table, then
// one section per cluster.
func WriteMarkdown(w io.Writer, r *Report) error {
	var b strings.Builder
	st := &r.Stats
	o := &r.Options
	th := &o.Thresholds
	b.WriteString("# Knowledge-gap report\n\n")
	b.WriteString(itoa(st.Events) + " events, " + itoa(st.DistinctQueries) + " distinct queries, " + itoa(st.Clusters) + " clusters")
	if o.MinCount > 1 {
		b.WriteString("; " + itoa(len(r.Clusters)) + " with at least " + itoa(o.MinCount) + " events shown")
	}
	b.WriteString(".\n\n")
	b.WriteString("Clustering: cosine >= " + ftoa(o.Cosine) + " on query embeddings, Jaccard >= " + ftoa(o.Jaccard) +
		" on query terms when a query has no embedding. Diagnosis: floor " + ftoa(th.Floor) + ", near " + ftoa(th.Near) +
		", low confidence " + ftoa(th.LowConfidence) + ".\n\n")
	if len(r.Clusters) == 0 {
		b.WriteString("No clusters.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("| # | Gap | Events | Hard | Soft | Thumbs down | Low conf. | Failure mode | Fix | Last seen |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---|---|---|\n")
	for i := range r.Clusters {
		c := &r.Clusters[i]
		sc := &c.SourceCounts
		b.WriteString("| " + itoa(c.Rank) + " | " + cell(c.Representative) + " | " + itoa(c.Count) + " | " + itoa(sc.RefusalHard) + " | " +
			itoa(sc.RefusalSoft) + " | " + itoa(sc.ThumbsDown) + " | " + itoa(sc.LowConfidence) + " | " + c.Diagnosis.Mode + " | " +
			c.Diagnosis.Fix + " | " + c.LastSeen + " |\n")
	}
	for i := range r.Clusters {
		c := &r.Clusters[i]
		d := &c.Diagnosis
		b.WriteString("\n## " + itoa(c.Rank) + ". " + cell(c.Representative) + "\n\n")
		b.WriteString("- " + plural(c.Count, "event") + ", " + plural(c.DistinctQueries, "distinct wording") + "; id `" + c.ID + "`; path " + c.Path)
		if c.FirstSeen != "" {
			b.WriteString("; seen " + c.FirstSeen + " to " + c.LastSeen)
		}
		b.WriteString("\n")
		sc := &c.SourceCounts
		b.WriteString("- source counts: refusal_hard " + itoa(sc.RefusalHard) + ", refusal_soft " + itoa(sc.RefusalSoft) +
			", thumbs_down " + itoa(sc.ThumbsDown) + ", low_confidence " + itoa(sc.LowConfidence) + "\n")
		b.WriteString("- failure mode: **" + d.Mode + "** (" + d.Reason + ")\n")
		b.WriteString("- fix: **" + d.Fix + "**. " + d.Action + "\n")
		if len(d.Signals) > 0 {
			b.WriteString("- median signals:")
			for j, s := range d.Signals {
				if j > 0 {
					b.WriteString(",")
				}
				b.WriteString(" " + s.Name + " " + ftoa(s.Value))
			}
			b.WriteString("\n")
		}
		if len(c.Policies) > 0 {
			b.WriteString("- policies: " + strings.Join(c.Policies, ", ") + "\n")
		}
		if len(c.Examples) > 0 {
			b.WriteString("- also asked as:\n")
			for _, e := range c.Examples {
				b.WriteString("  - " + cell(e) + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell makes user text safe inside a Markdown table cell or heading.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("|", `\|`, "`", "'").Replace(s)
}

func itoa(n int) string { return strconv.Itoa(n) }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return itoa(n) + " " + noun + "s"
}
