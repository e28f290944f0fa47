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

// WriteMarkdown writes the report as a ranked backlog for people: a
// summary table, then one section per cluster with the failure mode and fix
// in words and the signals behind them as sentences. The raw numbers
// (snake_case mode and fix, the rule, every median) sit in a collapsed
// <details> block at the end of each section.
func WriteMarkdown(w io.Writer, r *Report) error {
	var b strings.Builder
	st := &r.Stats
	o := &r.Options
	th := &o.Thresholds
	b.WriteString("# Knowledge-gap report\n\n")
	b.WriteString(plural(st.Events, "event"))
	if r.FirstSeenText != "" {
		b.WriteString(" from " + r.FirstSeenText + " to " + r.LastSeenText)
	}
	b.WriteString(", " + plural(st.DistinctQueries, "distinct question") + ", " + plural(st.Clusters, "gap"))
	if o.MinCount > 1 {
		b.WriteString("; the " + itoa(len(r.Clusters)) + " with at least " + plural(o.MinCount, "event") + " are shown")
	}
	b.WriteString(".\n\n")
	for _, n := range r.Notes {
		b.WriteString("> " + cell(n) + "\n\n")
	}
	b.WriteString("Gaps are ranked by how often they were hit. " + o.method() + " Diagnosis: floor " + ftoa(th.Floor) + ", near " + ftoa(th.Near) +
		", low confidence " + ftoa(th.LowConfidence) + "; numbers are medians over each gap's events.\n\n")
	if len(r.Clusters) == 0 {
		b.WriteString("No gaps.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("| # | Gap | Events | Hard | Soft | Thumbs down | Low conf. | What is wrong | Fix | Last seen |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---|---|---|\n")
	for i := range r.Clusters {
		c := &r.Clusters[i]
		sc := &c.SourceCounts
		b.WriteString("| " + itoa(c.Rank) + " | " + cell(c.Representative) + " | " + itoa(c.Count) + " | " + itoa(sc.RefusalHard) + " | " +
			itoa(sc.RefusalSoft) + " | " + itoa(sc.ThumbsDown) + " | " + itoa(sc.LowConfidence) + " | " + c.Diagnosis.Title + " | " +
			c.Diagnosis.FixTitle + " | " + c.LastSeenText + " |\n")
	}
	for i := range r.Clusters {
		c := &r.Clusters[i]
		d := &c.Diagnosis
		b.WriteString("\n## " + itoa(c.Rank) + ". " + cell(c.Representative) + "\n\n")
		b.WriteString("**" + d.Title + ".** Fix: **" + d.FixTitle + ".** " + d.Action + "\n\n")
		b.WriteString("- " + plural(c.Count, "event") + " (" + c.SourceCounts.Words() + "), " + plural(c.DistinctQueries, "wording"))
		if c.FirstSeenText != "" {
			b.WriteString("; first seen " + c.FirstSeenText + ", last seen " + c.LastSeenText)
		}
		b.WriteString("\n")
		if len(d.Why) > 0 {
			b.WriteString("- Why:\n")
			for _, s := range d.Why {
				b.WriteString("  - " + s + "\n")
			}
		}
		if len(c.Examples) > 0 {
			b.WriteString("- Also asked as:\n")
			for _, e := range c.Examples {
				b.WriteString("  - " + cell(e) + "\n")
			}
		}
		b.WriteString("\n<details><summary>Numbers for engineers</summary>\n\n")
		b.WriteString("- failure mode `" + d.Mode + "`, fix `" + d.Fix + "`: " + d.Reason + "\n")
		b.WriteString("- id `" + c.ID + "`; path " + c.Path)
		if len(c.Policies) > 0 {
			b.WriteString("; policies " + strings.Join(c.Policies, ", "))
		}
		if c.FirstSeen != "" {
			b.WriteString("; seen " + c.FirstSeen + " to " + c.LastSeen)
		}
		b.WriteString("\n")
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
		b.WriteString("\n</details>\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell makes user text safe inside a Markdown table cell or heading: one
// line, no column breaks or code spans, and no HTML (a query holding
// "</details>" or "<script>" renders as text).
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("|", `\|`, "`", "'", "<", "&lt;").Replace(s)
}

func itoa(n int) string { return strconv.Itoa(n) }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return itoa(n) + " " + noun + "s"
}
