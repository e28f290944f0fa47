package gaps

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// hostileQueries are user text that would break out of an unescaped page:
// a script, an attribute break-out, an SVG handler, a comment, a closing
// tag for the engineers' block.
var hostileQueries = []string{
	`<script>document.title="pwned"</script> how do I reset?`,
	`"><img src=x onerror=alert(1)> refund 'policy'`,
	`<svg onload=alert(2)> & invoices`,
	`<!-- where --> is </details></article> my order`,
}

func hostileEvents() []Event {
	at := time.Date(2026, 11, 25, 14, 3, 12, 123456789, time.UTC)
	var evs []Event
	for i, q := range hostileQueries {
		for j := 0; j <= i; j++ {
			evs = append(evs, Event{Kind: kinds[(i+j)%4], Query: q, Time: at.Add(time.Duration(i*7+j) * time.Hour), HasTime: true,
				Signals: map[string]float64{"evidence_top": 0.1, "coverage": 0.2}})
		}
	}
	return evs
}

func writeHTML(t *testing.T, evs []Event, opt HTMLOptions) string {
	t.Helper()
	rep := build(t, evs)
	var b bytes.Buffer
	if err := WriteHTML(&b, rep, evs, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestHTMLEscapesUserText(t *testing.T) {
	out := writeHTML(t, hostileEvents(), HTMLOptions{Source: `<b>"log"</b>`, Notes: []string{"<i>note</i>"}})
	for _, bad := range []string{"<script", "<img", "<svg onload", "<!-- where", "</details></article> my", "<b>\"log", "<i>note"} {
		if strings.Contains(out, bad) {
			t.Errorf("output holds unescaped %q", bad)
		}
	}
	for _, good := range []string{"&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;", "&#34;&gt;&lt;img src=x onerror=alert(1)&gt; refund &#39;policy&#39;",
		"&lt;svg onload=alert(2)&gt; &amp; invoices", "&lt;b&gt;&#34;log&#34;&lt;/b&gt;"} {
		if !strings.Contains(out, good) {
			t.Errorf("output lacks the escaped text %q", good)
		}
	}
	// The page forbids scripts and every load even if escaping failed.
	if !strings.Contains(out, `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`) {
		t.Error("no Content-Security-Policy meta tag")
	}
}

// Self-contained: nothing is loaded from anywhere, and the page's only
// links are to its own sections.
func TestHTMLSelfContained(t *testing.T) {
	out := writeHTML(t, hostileEvents(), HTMLOptions{})
	for _, bad := range []string{"http:", "https:", "src=", "<link", "@import", "url("} {
		if n := strings.Count(out, bad) - strings.Count(out, "src=x"); n > 0 {
			t.Errorf("output holds %q %d times", bad, n)
		}
	}
	if n, m := strings.Count(out, "<svg class=\"chart\""), strings.Count(out, "</svg>"); n == 0 || n != m {
		t.Errorf("%d charts opened, %d closed", n, m)
	}
}

func TestHTMLDeterministic(t *testing.T) {
	a := writeHTML(t, hostileEvents(), HTMLOptions{})
	b := writeHTML(t, hostileEvents(), HTMLOptions{})
	if a != b {
		t.Fatal("same events, different pages")
	}
	// The axis ends at the latest event, whatever the clock says.
	if !strings.Contains(a, "2026-11-25 14:03 UTC to 2026-11-26 14:03 UTC") {
		t.Errorf("span missing or not from the events")
	}
}

// A big log still gives a bounded page: at most MaxClusters gaps, and the
// page says how many it left out.
func TestHTMLCapsClusters(t *testing.T) {
	var evs []Event
	for i := 0; i < 300; i++ {
		// Unrelated in every word: a template with a number in it ("order
		// 17 status") is one gap to the character path.
		evs = append(evs, Event{Kind: KindRefusalHard, Query: syntheticWord(i) + " " + syntheticWord(i+1000) + " " + syntheticWord(i+2000)})
	}
	out := writeHTML(t, evs, HTMLOptions{MaxClusters: 20})
	if n := strings.Count(out, `<article class="gap"`); n != 20 {
		t.Errorf("%d gaps shown, want 20", n)
	}
	if !strings.Contains(out, "Not shown: 280 lower-ranked gaps past the first 20.") {
		t.Error("the page does not say what it left out")
	}
	if !strings.Contains(out, "No event carries a time") {
		t.Error("events without times: the trend should say it has nothing to draw")
	}
	rep := build(t, evs)
	rep.Filter(2)
	var b bytes.Buffer
	if err := WriteHTML(&b, rep, evs, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "No gaps to show.") || !strings.Contains(s, "Not shown: 300 gaps with fewer than 2 events.") {
		t.Error("a filtered-out report should say why nothing is shown")
	}
}

// The page's words: modes, fixes and kinds in plain language, readable
// times, and the raw medians only inside the collapsed block.
func TestHTMLWords(t *testing.T) {
	evs := hostileEvents()
	evs[0].Signals = map[string]float64{"evidence_top": 0.1, "coverage": 0.2, "weird_signal_name": 0.5}
	out := writeHTML(t, evs, HTMLOptions{})
	for _, want := range []string{"The knowledge base has nothing on this", "Write new content", "hard refusal",
		"The best passage found scores 0.10, far below the 0.35 the policy needs to use it.", "first seen 2026-11-25 14:03 UTC"} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	main, _, _ := strings.Cut(out, "<details>")
	if strings.Contains(main, "weird_signal_name") || strings.Contains(main, "no_relevant_docs</") || strings.Contains(main, "123456789") {
		t.Error("raw signal names, snake_case modes or nanoseconds appear before the first <details>")
	}
	if !strings.Contains(out, "<code>weird_signal_name</code>") || !strings.Contains(out, "2026-11-25T14:03:12.123456789Z") {
		t.Error("the engineers' block lacks the raw numbers")
	}
}
