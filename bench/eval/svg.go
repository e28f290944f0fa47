package eval

import (
	"strconv"
	"strings"
)

// Series is one named line of a plot.
type Series struct {
	Name   string
	X, Y   []float64
	Dashed bool
}

// Plot is a line chart over [0,1]x[YMin,1], written as hand-made SVG: no
// dependency, and the same input gives the same bytes, so the plot in docs/
// diffs cleanly when regenerated.
type Plot struct {
	Title, XLabel, YLabel string
	YMin                  float64
	Series                []Series
}

// palette is colour-blind safe (Okabe-Ito).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"}

// SVG renders the plot.
func (p Plot) SVG() []byte {
	const w, h = 640.0, 420.0
	const l, r, t, b = 60.0, 190.0, 36.0, 50.0
	pw, ph := w-l-r, h-t-b
	ymin := p.YMin
	if ymin >= 1 {
		ymin = 0
	}
	x := func(v float64) float64 { return l + clamp01(v)*pw }
	y := func(v float64) float64 { return t + ph - clamp01((v-ymin)/(1-ymin))*ph }
	var s strings.Builder
	s.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" width="640" height="420" viewBox="0 0 640 420" font-family="sans-serif" font-size="12">` + "\n")
	s.WriteString(`<rect width="640" height="420" fill="#ffffff"/>` + "\n")
	s.WriteString(`<text x="` + f1(l) + `" y="22" font-size="14" font-weight="bold">` + esc(p.Title) + "</text>\n")
	for i := 0; i <= 5; i++ {
		v := float64(i) / 5
		s.WriteString(`<line x1="` + f1(x(v)) + `" y1="` + f1(t) + `" x2="` + f1(x(v)) + `" y2="` + f1(t+ph) + `" stroke="#e5e5e5"/>` + "\n")
		s.WriteString(`<text x="` + f1(x(v)) + `" y="` + f1(t+ph+16) + `" text-anchor="middle">` + f2(v) + "</text>\n")
		yv := ymin + (1-ymin)*v
		s.WriteString(`<line x1="` + f1(l) + `" y1="` + f1(y(yv)) + `" x2="` + f1(l+pw) + `" y2="` + f1(y(yv)) + `" stroke="#e5e5e5"/>` + "\n")
		s.WriteString(`<text x="` + f1(l-6) + `" y="` + f1(y(yv)+4) + `" text-anchor="end">` + f2(yv) + "</text>\n")
	}
	s.WriteString(`<rect x="` + f1(l) + `" y="` + f1(t) + `" width="` + f1(pw) + `" height="` + f1(ph) + `" fill="none" stroke="#333333"/>` + "\n")
	s.WriteString(`<text x="` + f1(l+pw/2) + `" y="` + f1(h-12) + `" text-anchor="middle">` + esc(p.XLabel) + "</text>\n")
	s.WriteString(`<text transform="translate(16 ` + f1(t+ph/2) + `) rotate(-90)" text-anchor="middle">` + esc(p.YLabel) + "</text>\n")
	for i, se := range p.Series {
		col := palette[i%len(palette)]
		var pts []string
		for j := range se.X {
			if j < len(se.Y) && se.Y[j] == se.Y[j] { // skip NaN
				pts = append(pts, f1(x(se.X[j]))+","+f1(y(se.Y[j])))
			}
		}
		dash := ""
		if se.Dashed {
			dash = ` stroke-dasharray="5 4"`
		}
		s.WriteString(`<polyline fill="none" stroke="` + col + `" stroke-width="1.8"` + dash + ` points="` + strings.Join(pts, " ") + `"/>` + "\n")
		ly := t + 10 + float64(i)*18
		s.WriteString(`<line x1="` + f1(l+pw+12) + `" y1="` + f1(ly) + `" x2="` + f1(l+pw+34) + `" y2="` + f1(ly) + `" stroke="` + col + `" stroke-width="2"` + dash + "/>\n")
		s.WriteString(`<text x="` + f1(l+pw+40) + `" y="` + f1(ly+4) + `">` + esc(se.Name) + "</text>\n")
	}
	s.WriteString("</svg>\n")
	return []byte(s.String())
}

func clamp01(v float64) float64 {
	if v < 0 || v != v {
		return 0
	}
	if v > 1 {
		return 1
	}
	return v
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
func f2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
