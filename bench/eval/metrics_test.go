package eval

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"testing"
)

// bruteAUROC counts every positive/negative pair, ties one half.
func bruteAUROC(s []float64, l []bool) float64 {
	var win, n float64
	for i := range s {
		for j := range s {
			if l[i] && !l[j] {
				n++
				switch {
				case s[i] > s[j]:
					win++
				case s[i] == s[j]:
					win += 0.5
				}
			}
		}
	}
	return win / n
}

func TestAUROC(t *testing.T) {
	cases := []struct {
		name   string
		scores []float64
		labels []bool
		want   float64
	}{
		{"perfect", []float64{0.1, 0.2, 0.8, 0.9}, []bool{false, false, true, true}, 1},
		{"reversed", []float64{0.9, 0.8, 0.2, 0.1}, []bool{false, false, true, true}, 0},
		{"all tied", []float64{0.5, 0.5, 0.5, 0.5}, []bool{false, true, false, true}, 0.5},
		{"one inversion", []float64{0.1, 0.4, 0.35, 0.8}, []bool{false, false, true, true}, 0.75},
		{"tie across classes", []float64{0.3, 0.5, 0.5, 0.9}, []bool{false, false, true, true}, 0.875},
	}
	for _, c := range cases {
		if got := AUROC(c.scores, c.labels); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: AUROC = %v, want %v", c.name, got, c.want)
		}
	}
	if !math.IsNaN(AUROC([]float64{1, 2}, []bool{true, true})) {
		t.Error("one class only: want NaN")
	}
}

// TestAUROCMatchesPairCount checks the rank statistic against the pair
// count on a deterministic sequence with many ties.
func TestAUROCMatchesPairCount(t *testing.T) {
	var s []float64
	var l []bool
	x := uint32(12345)
	for i := 0; i < 300; i++ {
		x = x*1664525 + 1013904223
		s = append(s, float64(x>>27)) // 32 distinct values: many ties
		l = append(l, (x>>13)&3 == 0 || x>>30 == 3)
	}
	got, want := AUROC(s, l), bruteAUROC(s, l)
	if math.Abs(got-want) > 1e-12 {
		t.Fatalf("AUROC %v, pair count %v", got, want)
	}
}

func TestCoverageCurve(t *testing.T) {
	conf := []float64{0.9, 0.8, 0.8, 0.3, 0.1}
	lab := []bool{true, true, false, true, false}
	got := CoverageCurve(conf, lab)
	want := []CurvePoint{{0.9, 0.2, 1}, {0.8, 0.6, 2.0 / 3}, {0.3, 0.8, 0.75}, {0.1, 1, 0.6}}
	if len(got) != len(want) {
		t.Fatalf("got %d points, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if math.Abs(got[i].Coverage-want[i].Coverage) > 1e-12 || math.Abs(got[i].Accuracy-want[i].Accuracy) > 1e-12 || got[i].Threshold != want[i].Threshold {
			t.Errorf("point %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// Area: 0.2*1 + 0.4*(1+2/3)/2 + 0.2*(2/3+0.75)/2 + 0.2*(0.75+0.6)/2
	wantArea := 0.2 + 0.4*(5.0/3)/2 + 0.2*(2.0/3+0.75)/2 + 0.2*1.35/2
	if a := AURC(got); math.Abs(a-wantArea) > 1e-12 {
		t.Errorf("AURC = %v, want %v", a, wantArea)
	}
	if a := AccuracyAt(got, 0.5); math.Abs(a-2.0/3) > 1e-12 {
		t.Errorf("AccuracyAt(0.5) = %v", a)
	}
}

func TestRates(t *testing.T) {
	var p PR
	// answered/answerable: 3 TP, 1 FP, 2 FN, 4 TN.
	for _, c := range []struct {
		pred, act bool
		n         int
	}{{true, true, 3}, {true, false, 1}, {false, true, 2}, {false, false, 4}} {
		for i := 0; i < c.n; i++ {
			p.Add(c.pred, c.act)
		}
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"precision", p.Precision(), 0.75},
		{"recall", p.Recall(), 0.6},
		{"hallucination", p.HallucinationRate(), 0.2},
		{"error", p.ErrorRate(), 0.4},
		{"coverage", p.Coverage(), 0.4},
		{"f1", p.F1(), 6.0 / 9},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestSplitDeterministicAndBalanced(t *testing.T) {
	n := 0
	for i := 0; i < 2000; i++ {
		id := string(rune('a'+i%26)) + string(rune('0'+i%10)) + string(rune(i))
		if IsTune("x", id) != IsTune("x", id) {
			t.Fatal("split is not deterministic")
		}
		if IsTune("x", id) {
			n++
		}
	}
	if n < 900 || n > 1100 {
		t.Errorf("tune half holds %d of 2000", n)
	}
}

func TestTokensAndCoverage(t *testing.T) {
	got := QueryTerms("What is Photosynthesis? photosynthesis in C4 plants")
	want := []string{"photosynthesis", "plants"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("QueryTerms = %q, want %q", got, want)
	}
	if c := Coverage(want, "Plants use photosynthesis."); c != 1 {
		t.Errorf("coverage = %v, want 1", c)
	}
	if c := Coverage(want, "implants"); c != 0 {
		t.Errorf("substring matched: coverage = %v, want 0", c)
	}
}

func TestSVGIsWellFormed(t *testing.T) {
	p := Plot{Title: "a < b & c", XLabel: "coverage", YLabel: "accuracy", YMin: 0.4,
		Series: []Series{{Name: "s1", X: []float64{0, 0.5, 1}, Y: []float64{1, 0.8, math.NaN()}}, {Name: "s2", X: []float64{1}, Y: []float64{0.5}, Dashed: true}}}
	out := p.SVG()
	if !bytes.Equal(out, p.SVG()) {
		t.Fatal("SVG is not deterministic")
	}
	dec := xml.NewDecoder(bytes.NewReader(out))
	lines := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			lines++
		}
	}
	if lines != 2 {
		t.Errorf("got %d polylines, want 2", lines)
	}
	if bytes.Contains(out, []byte("NaN")) {
		t.Error("NaN leaked into the SVG")
	}
}
