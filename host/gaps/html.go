package gaps

import (
	"bytes"
	_ "embed"
	"html/template"
	"io"
)

// HTMLOptions control the HTML report.
type HTMLOptions struct {
	// Title heads the page; default "Knowledge-gap report".
	Title string
	// Source says where the events came from ("events.jsonl", "the live gap
	// log"); shown under the title.
	Source string
	// Notes are shown in a box at the top: what was left out and why (a
	// capped read, skipped lines).
	Notes []string
	// MaxClusters caps the gaps shown, highest ranked first, so a log with
	// fifty thousand one-off questions still gives a page a browser opens;
	// 0 means DefaultMaxHTMLClusters. The page says how many it left out.
	MaxClusters int
}

// DefaultMaxHTMLClusters is how many gaps the HTML report shows by default.
const DefaultMaxHTMLClusters = 100

// trendClusters is how many of the top gaps the trend section draws
// separately (every gap's card has its own line too).
const trendClusters = 5

//go:embed report.css
var reportCSS string

//go:embed report.html.tmpl
var reportTmpl string

var htmlReport = template.Must(template.New("report").Funcs(template.FuncMap{"num": ftoa}).Parse(reportTmpl))

// page is what the template prints; every number and label is computed
// here.
type page struct {
	Title, Source string
	Notes         []string
	CSS           template.CSS
	Summary       string
	Span          string
	Kinds         []kindTotal
	Rows          []row
	Left          string // gaps not shown, in words; "" when all are
	Trend         *svgChart
	TrendNote     string
	TopTrends     []topTrend
	Method        string
}

type kindTotal struct {
	Class, Label string
	Count        int
}

type row struct {
	*Cluster
	Sources string // "5 low-confidence answers, 2 soft refusals"
	Bar     svgChart
	BigBar  svgChart
	Spark   *svgChart
	Peak    string // peakNote of Spark
}

type topTrend struct {
	Rank                      int
	Anchor, Name, Total, Peak string
	Spark                     svgChart
}

// WriteHTML writes the report as one self-contained HTML page: inline CSS
// and SVG, no script, no external resource (a Content-Security-Policy meta
// tag forbids both), so it opens offline and can be mailed as a file.
// events must be the slice r was built from (the trend reads their times),
// or nil for a streamed report, which carries its own counts.
// Queries are user text and are escaped by html/template in every context
// they appear in (text, attributes, SVG titles).
func WriteHTML(w io.Writer, r *Report, events []Event, opt HTMLOptions) error {
	p := page{Title: opt.Title, Source: opt.Source, Notes: opt.Notes, CSS: template.CSS(reportCSS)}
	if p.Title == "" {
		p.Title = "Knowledge-gap report"
	}
	st := &r.Stats
	p.Summary = plural(st.Events, "event") + " · " + plural(st.DistinctQueries, "distinct question") + " · " + plural(st.Clusters, "gap")
	if r.FirstSeenText != "" {
		p.Span = r.FirstSeenText + " to " + r.LastSeenText
	}
	var counts [4]int
	if r.timeline != nil {
		counts = r.timeline.kinds
	} else {
		var all SourceCounts
		for i := range events {
			all.add(events[i].Kind)
		}
		counts = all.byKind()
	}
	for k, n := range counts {
		p.Kinds = append(p.Kinds, kindTotal{Class: "k" + itoa(k), Label: KindNoun(kinds[k], n), Count: n})
	}

	limit := opt.MaxClusters
	if limit <= 0 {
		limit = DefaultMaxHTMLClusters
	}
	shown := r.Clusters[:min(len(r.Clusters), limit)]
	var left []string
	if n := st.Clusters - len(r.Clusters); n > 0 {
		left = append(left, plural(n, "gap")+" with fewer than "+plural(r.Options.MinCount, "event"))
	}
	if n := len(r.Clusters) - len(shown); n > 0 {
		left = append(left, plural(n, "lower-ranked gap")+" past the first "+itoa(limit))
	}
	switch len(left) {
	case 1:
		p.Left = "Not shown: " + left[0] + "."
	case 2:
		p.Left = "Not shown: " + left[0] + ", and " + left[1] + "."
	}

	var tr *Trend
	if r.timeline != nil {
		tr = r.timeline.trend(shown)
	} else {
		tr = NewTrend(events, shown)
	}
	if tr != nil {
		ch := trendChart(tr)
		p.Trend = &ch
		var notes []string
		if tr.Before > 0 {
			notes = append(notes, plural(tr.Before, "older event")+" before the first "+tr.UnitName()+" shown")
		}
		if tr.Untimed > 0 {
			notes = append(notes, plural(tr.Untimed, "event")+" without a time")
		}
		if len(notes) == 2 {
			p.TrendNote = "Not in the chart: " + notes[0] + ", and " + notes[1] + "."
		} else if len(notes) == 1 {
			p.TrendNote = "Not in the chart: " + notes[0] + "."
		}
	}

	peak := 0
	for i := range shown {
		peak = max(peak, shown[i].Count)
	}
	for i := range shown {
		c := &shown[i]
		counts := c.SourceCounts.byKind()
		rw := row{Cluster: c, Sources: c.SourceCounts.Words(),
			Bar:    sourceBar(counts, peak, 120, 12, "Events by source, on the scale of the largest gap"),
			BigBar: sourceBar(counts, c.Count, 320, 18, "Events by source")}
		if tr != nil {
			sp := sparkline(tr.Clusters[i], tr, "Events of this gap per "+tr.UnitName())
			rw.Spark, rw.Peak = &sp, peakNote(tr.Clusters[i], tr)
			if i < trendClusters {
				p.TopTrends = append(p.TopTrends, topTrend{Rank: c.Rank, Anchor: c.ID, Name: c.Representative,
					Total: plural(c.Count, "event"), Peak: rw.Peak, Spark: sp})
			}
		}
		p.Rows = append(p.Rows, rw)
	}

	o := &r.Options
	th := &o.Thresholds
	p.Method = "Gaps are ranked by how often they were hit. " + o.method() + " The diagnosis compares medians over each gap's events with the evidence floor " +
		ftoa(th.Floor) + " (near: " + ftoa(th.Near) + ") and the low-confidence line " + ftoa(th.LowConfidence) + ". See docs/gaps.md."

	var buf bytes.Buffer
	if err := htmlReport.Execute(&buf, &p); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
