package gaps

import "strconv"

// Inline SVG charts for the HTML report. Geometry is computed here and the
// template (html.go) only prints it, so every coordinate is a pre-formatted
// string and the same counts always give the same bytes. Colours come from
// CSS classes (k0..k3, one per kind), so the legend and the bars agree.

type svgChart struct {
	W, H  int
	Label string // the chart's accessible name
	Rects []svgRect
	Lines []svgLine
	Texts []svgText
}

type svgRect struct {
	X, Y, W, H string
	Class      string
	Title      string // a tooltip: what the shape counts
}

type svgLine struct{ X1, Y1, X2, Y2, Class string }

type svgText struct {
	X, Y   string
	Anchor string // start | middle | end
	Text   string
}

func px(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// sourceBar is one horizontal bar, its segments the event kinds, scaled so
// that max events fill the width: bars of different clusters compare.
func sourceBar(counts [4]int, max, w, h int, label string) svgChart {
	ch := svgChart{W: w, H: h, Label: label}
	if max <= 0 {
		return ch
	}
	x := 0.0
	for k, n := range counts {
		if n == 0 {
			continue
		}
		sw := float64(n) * float64(w) / float64(max)
		ch.Rects = append(ch.Rects, svgRect{X: px(x), Y: "0", W: px(sw), H: itoa(h), Class: "k" + itoa(k), Title: itoa(n) + " " + KindNoun(kinds[k], n)})
		x += sw
	}
	return ch
}

// niceMax rounds a count up to 1, 2 or 5 times a power of ten, so the axis
// reads in round numbers.
func niceMax(n int) int {
	if n <= 1 {
		return 1
	}
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
	}
}

// trendChart draws the events per bucket as columns stacked by kind, with a
// y axis in round numbers and a few bucket labels under the x axis.
func trendChart(tr *Trend) svgChart {
	const w, h, left, right, top, bottom = 960, 220, 40, 8, 10, 24
	ch := svgChart{W: w, H: h, Label: "Events per " + tr.UnitName() + ", stacked by kind"}
	n := len(tr.Overall)
	peak := 0
	for _, c := range tr.Overall {
		peak = max(peak, c[0]+c[1]+c[2]+c[3])
	}
	ymax := niceMax(peak)
	plotW, plotH := float64(w-left-right), float64(h-top-bottom)
	y := func(v int) float64 { return float64(top) + plotH - float64(v)*plotH/float64(ymax) }
	ticks := []int{0, ymax}
	if ymax%2 == 0 {
		ticks = []int{0, ymax / 2, ymax}
	}
	for _, v := range ticks {
		ch.Lines = append(ch.Lines, svgLine{X1: itoa(left), Y1: px(y(v)), X2: itoa(w - right), Y2: px(y(v)), Class: "grid"})
		ch.Texts = append(ch.Texts, svgText{X: itoa(left - 6), Y: px(y(v) + 4), Anchor: "end", Text: itoa(v)})
	}
	bw := plotW / float64(n)
	gap := min(bw*0.15, 3)
	for i, c := range tr.Overall {
		x := float64(left) + float64(i)*bw + gap/2
		base := 0
		total := c[0] + c[1] + c[2] + c[3]
		if total == 0 {
			continue
		}
		title := tr.BucketTitle(i) + ": " + plural(total, "event") + " (" + (&SourceCounts{c[0], c[1], c[2], c[3]}).Words() + ")"
		for k, v := range c {
			if v == 0 {
				continue
			}
			ch.Rects = append(ch.Rects, svgRect{X: px(x), Y: px(y(base + v)), W: px(bw - gap), H: px(y(base) - y(base+v)), Class: "k" + itoa(k), Title: title})
			base += v
		}
	}
	step := (n + 7) / 8 // at most eight labels
	for i := 0; i < n; i += step {
		ch.Texts = append(ch.Texts, svgText{X: px(float64(left) + (float64(i)+0.5)*bw), Y: itoa(h - 6), Anchor: "middle", Text: tr.BucketLabel(i)})
	}
	return ch
}

// sparkline draws one cluster's events per bucket as plain columns, on the
// overall chart's time axis, labelled with its first and last bucket. The
// columns scale to the cluster's own busiest bucket (peakNote says how
// busy), so a small gap's shape is visible too.
func sparkline(counts []int, tr *Trend, label string) svgChart {
	const w, h, plot = 240, 46, 30
	ch := svgChart{W: w, H: h, Label: label}
	peak := 0
	for _, v := range counts {
		peak = max(peak, v)
	}
	ch.Lines = append(ch.Lines, svgLine{X1: "0", Y1: itoa(plot), X2: itoa(w), Y2: itoa(plot), Class: "axis"})
	if peak == 0 {
		return ch
	}
	bw := float64(w) / float64(len(counts))
	for i, v := range counts {
		if v == 0 {
			continue
		}
		bh := float64(v) * float64(plot-2) / float64(peak)
		ch.Rects = append(ch.Rects, svgRect{X: px(float64(i)*bw + min(bw*0.1, 1)), Y: px(float64(plot) - bh), W: px(bw - 2*min(bw*0.1, 1)), H: px(bh),
			Class: "spark", Title: tr.BucketTitle(i) + ": " + plural(v, "event")})
	}
	last := len(counts) - 1
	ch.Texts = append(ch.Texts, svgText{X: "0", Y: itoa(h - 3), Anchor: "start", Text: tr.BucketLabel(0)},
		svgText{X: itoa(w), Y: itoa(h - 3), Anchor: "end", Text: tr.BucketLabel(last)})
	return ch
}

// peakNote says how busy a cluster's busiest bucket was: "at most 4 a day";
// "" when no bucket held more than one event.
func peakNote(counts []int, tr *Trend) string {
	peak := 0
	for _, v := range counts {
		peak = max(peak, v)
	}
	if peak <= 1 {
		return ""
	}
	return "at most " + itoa(peak) + " a " + tr.UnitName()
}
