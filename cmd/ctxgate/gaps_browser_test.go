package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The HTML gap report in a real headless Chromium (Debian's chromium
// package, driven over the DevTools protocol): the page written by
// `gaps report --format html` and the one `ctxgate serve` serves at /gaps
// render with no console error and no request beyond the page itself, show
// the gaps and their SVG charts, keep hostile queries as text, and give a
// non-blank screenshot. CTXGATE_GAPS_SCREENSHOT=DIR keeps the screenshots.
func TestGapsReportInChromium(t *testing.T) {
	browser := startChromium(t, chromium(t))
	dir := t.TempDir()
	events := filepath.Join(dir, "events.jsonl")
	sample, err := os.ReadFile(sampleEvents)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(events, append(sample, hostileLines(t)...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, page, errs := cli(t, "", "gaps", "report", "--events", events, "--format", "html")
	if code != exitOK {
		t.Fatalf("gaps report: exit %d %s", code, errs)
	}
	file := filepath.Join(dir, "report.html")
	os.WriteFile(file, []byte(page), 0o644)
	t.Logf("page: %d bytes", len(page))
	// The same events streamed in chunks of 8: the page is drawn from the
	// report's sketches and counts (its trend included), not from events.
	code, streamed, errs := cli(t, "", "gaps", "report", "--events", events, "--format", "html", "--chunk-events", "8")
	if code != exitOK {
		t.Fatalf("gaps report --chunk-events 8: exit %d %s", code, errs)
	}
	streamedFile := filepath.Join(dir, "streamed.html")
	os.WriteFile(streamedFile, []byte(streamed), 0o644)
	streamedGaps := strings.Count(streamed, `<article class="gap"`)
	if streamedGaps < 10 {
		t.Fatalf("streamed page: %d gaps", streamedGaps)
	}

	// serve reads the same events as its gap log, plus a refusal decided
	// through it just before the page is loaded.
	gapLog := filepath.Join(dir, "gaps.jsonl")
	os.WriteFile(gapLog, sample, 0o644)
	base := startServe(t, append([]string{"serve", "--listen", "127.0.0.1:0", "--reload-poll", "0", "--gap-log", gapLog}, wasmFlags(t, "tinygo")...)).base
	var req map[string]any
	b, _ := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", "default", "refuse_off_topic.json"))
	json.Unmarshal(b, &req)
	req["query"] = hostileQuery
	b, _ = json.Marshal(req)
	resp, err := http.Post(base+"/v1/gate", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("X-Ctxgate-Action") != "refuse" {
		t.Fatalf("the hostile query was not refused: %v", resp.Header)
	}

	for _, tc := range []struct {
		name, url string
		gaps      int
	}{
		{"file", "file://" + file, 12}, // the sample's 10 gaps and two hostile ones
		{"serve", base + "/gaps", 11},  // the sample's and the refusal decided above
		{"streamed", "file://" + streamedFile, streamedGaps},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := load(t, browser, tc.url)
			if len(got.console) > 0 {
				t.Errorf("console messages: %q", got.console)
			}
			if len(got.requests) != 1 || got.requests[0] != tc.url {
				t.Errorf("requests %q: the page must load nothing but itself", got.requests)
			}
			d := got.dom
			if d.Title != "Knowledge-gap report" || d.Scripts != 0 {
				t.Errorf("title %q, %d scripts: a query's markup ran", d.Title, d.Scripts)
			}
			if d.Gaps != tc.gaps || d.Rows != tc.gaps {
				t.Errorf("%d gap cards and %d backlog rows, want %d", d.Gaps, d.Rows, tc.gaps)
			}
			// Per gap a source bar in the table, one in the card and a
			// trend line; the overall trend; the top five again.
			if want := 3*tc.gaps + 1 + 5; d.Charts != want || d.VisibleCharts != want {
				t.Errorf("%d SVG charts (%d visible), want %d", d.Charts, d.VisibleCharts, want)
			}
			if d.TrendBars < 5 || d.SourceBars < tc.gaps {
				t.Errorf("%d trend bars, %d source bar segments", d.TrendBars, d.SourceBars)
			}
			if !strings.Contains(d.Text, hostileQuery) || !strings.Contains(d.Text, "The knowledge base has nothing on this") {
				t.Error("the page text lacks the hostile query as text, or the failure mode in words")
			}
			if d.DetailsOpen || d.SignalsVisible != 0 {
				t.Errorf("the raw medians should start collapsed: open %v, %d signal tables visible", d.DetailsOpen, d.SignalsVisible)
			}
			if d.ScrollWidth > 1200 {
				t.Errorf("page is %d px wide in a 1200 px window", d.ScrollWidth)
			}
			img, err := png.Decode(bytes.NewReader(got.screenshot))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w != 1200 || h < 1500 || h > 20000 {
				t.Errorf("screenshot %dx%d", w, h)
			}
			if colours, inked := inkStats(img); colours < 16 || inked < 0.02 {
				t.Errorf("screenshot looks blank: %d colours, %.3f of pixels not white", colours, inked)
			}
			if out := os.Getenv("CTXGATE_GAPS_SCREENSHOT"); out != "" {
				os.WriteFile(filepath.Join(out, "gaps-"+tc.name+".png"), got.screenshot, 0o644)
			}
		})
	}

	// The console check is not vacuous: a script the page's policy blocks
	// is reported.
	t.Run("console check sees errors", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.html")
		os.WriteFile(bad, []byte(`<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="default-src 'none'"><title>x</title><script>1</script>`), 0o644)
		if got := load(t, browser, "file://"+bad); len(got.console) == 0 {
			t.Error("a blocked inline script gave no console message")
		}
	})
}

// hostileQuery is user text that would run if the page did not escape it.
const hostileQuery = `<script>document.title="pwned"</script> "quoted" & 'refund' </details>`

func hostileLines(t *testing.T) []byte {
	var out []byte
	for i, q := range []string{hostileQuery, `<img src=x onerror="document.title='pwned'"> SSO`} {
		b, err := json.Marshal(map[string]any{"kind": "refusal_hard", "query": q, "signals": map[string]float64{"evidence_top": 0.05},
			"time": "2026-03-0" + string(rune('4'+i)) + "T12:00:00Z"})
		if err != nil {
			t.Fatal(err)
		}
		out = append(append(out, b...), '\n')
	}
	return out
}

// chromium finds the browser: CTXGATE_CHROMIUM, else chromium on PATH. In
// CI a missing browser fails the test; elsewhere it skips.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CTXGATE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium on PATH: apt-get install chromium (scripts/install-deps.sh does), or set CTXGATE_CHROMIUM"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

type pageDOM struct {
	Title          string `json:"title"`
	Scripts        int    `json:"scripts"`
	Gaps           int    `json:"gaps"`
	Rows           int    `json:"rows"`
	Charts         int    `json:"charts"`
	VisibleCharts  int    `json:"visibleCharts"`
	TrendBars      int    `json:"trendBars"`
	SourceBars     int    `json:"sourceBars"`
	Text           string `json:"text"`
	DetailsOpen    bool   `json:"detailsOpen"`
	SignalsVisible int    `json:"signalsVisible"`
	ScrollWidth    int    `json:"scrollWidth"`
}

const inspectJS = `(() => {
  const visible = s => [...document.querySelectorAll(s)].filter(e => { const r = e.getBoundingClientRect(); return e.checkVisibility() && r.width > 0 && r.height > 0 }).length;
  const d = document.querySelector('details');
  return {
    title: document.title,
    scripts: document.scripts.length,
    gaps: document.querySelectorAll('article.gap').length,
    rows: document.querySelectorAll('table.backlog tbody tr').length,
    charts: document.querySelectorAll('svg.chart').length,
    visibleCharts: visible('svg.chart'),
    trendBars: document.querySelectorAll('#trend figure.trend rect').length,
    sourceBars: document.querySelectorAll('table.backlog svg rect').length,
    text: document.body.innerText,
    detailsOpen: d ? d.open : false,
    signalsVisible: visible('table.signals'),
    scrollWidth: document.documentElement.scrollWidth,
  };
})()`

type loaded struct {
	dom        pageDOM
	console    []string // console calls, exceptions and browser log entries
	requests   []string // every URL the page asked for
	screenshot []byte   // full page, PNG
}

// startChromium starts one headless Chromium with a fresh profile for the
// test; load opens each page in a tab of its own.
func startChromium(t *testing.T, path string) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	var stderr lockedBuffer
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900),
		chromedp.CombinedOutput(&stderr),
	)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browser); err != nil { // starts the browser
		t.Fatalf("starting %s: %v\n%s", path, err, stderr.String())
	}
	return browser
}

// load opens url in a new tab of browser and reports what the page did.
func load(t *testing.T, browser context.Context, url string) loaded {
	t.Helper()
	tab, cancelTab := chromedp.NewContext(browser)
	defer cancelTab()
	var mu sync.Mutex
	var got loaded
	if err := chromedp.Listen(tab, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			got.console = append(got.console, "console."+string(e.Type))
		case *runtime.EventExceptionThrown:
			got.console = append(got.console, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			got.console = append(got.console, string(e.Entry.Level)+": "+e.Entry.Text)
		case *network.EventRequestWillBeSent:
			got.requests = append(got.requests, e.Request.URL)
		}
	}); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigate %s: %v", url, err)
	}
	dom, err := chromedp.Run(tab, chromedp.Evaluate[pageDOM](inspectJS))
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	shot, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	got.dom, got.screenshot = dom, shot
	return got
}

// inkStats samples every third pixel of every third row: how many distinct
// colours, and what share of pixels is not near-white.
func inkStats(img image.Image) (colours int, inked float64) {
	seen := map[[3]uint32]bool{}
	n, ink := 0, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			n++
			if r>>8 < 235 || g>>8 < 235 || bl>>8 < 235 {
				ink++
			}
		}
	}
	return len(seen), float64(ink) / float64(n)
}
