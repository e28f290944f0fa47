package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/host/gaps"
)

// TestGapsPage: /gaps is the report of the live gap log. A refusal decided
// a moment ago is on it (the queue is flushed first), user text is escaped,
// and the headers forbid scripts and caching.
func TestGapsPage(t *testing.T) {
	s := start(t, Options{GapLog: filepath.Join(t.TempDir(), "gaps.jsonl")})
	r := do(t, "GET", s.url+"/gaps", nil)
	if r.status != 200 || !strings.Contains(string(r.body), "No gaps to show.") {
		t.Fatalf("empty log: %d\n%s", r.status, r.body)
	}
	var req map[string]any
	json.Unmarshal(request(t, "default", "refuse_off_topic"), &req)
	hostile := `<script>alert("x")</script> refund policy for annual plans?`
	for _, q := range []string{req["query"].(string), hostile} {
		req["query"] = q
		b, _ := json.Marshal(req)
		if g := do(t, "POST", s.url+"/v1/gate", b); g.status != 200 || g.header.Get("X-Ctxgate-Action") != "refuse" {
			t.Fatalf("gate: %d %s", g.status, g.body)
		}
	}
	r = do(t, "GET", s.url+"/gaps", nil)
	page := string(r.body)
	if r.status != 200 || r.header.Get("Content-Type") != "text/html; charset=utf-8" || r.header.Get("Cache-Control") != "no-store" ||
		!strings.HasPrefix(r.header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("GET /gaps: %d %v", r.status, r.header)
	}
	for _, want := range []string{"2 events", "What is your refund policy for annual plans?", "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;",
		"the server&#39;s gap log gaps.jsonl, read when it changes (at most its newest 16 MiB)", "2 hard refusals"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") {
		t.Error("page holds an unescaped script")
	}
	if h := do(t, "HEAD", s.url+"/gaps", nil); h.status != 200 || len(h.body) != 0 {
		t.Errorf("HEAD: %d, %d bytes", h.status, len(h.body))
	}
	// The hostile wording is the refund question with a script in front:
	// one gap (the character link joins them), of 2 events.
	if p := do(t, "GET", s.url+"/gaps?min_count=3", nil); !strings.Contains(string(p.body), "Not shown: 1 gap with fewer than 3 events.") {
		t.Errorf("min_count=3 should leave the gap out and say so: %s", p.body[strings.Index(string(p.body), "<main>"):])
	}
	for _, bad := range []string{"min_count=x", "floor=high", "floor=2"} {
		if p := do(t, "GET", s.url+"/gaps?"+bad, nil); p.status != 400 {
			t.Errorf("%s: %d %s", bad, p.status, p.body)
		}
	}
	if p := do(t, "POST", s.url+"/gaps", nil); p.status != 405 {
		t.Errorf("POST /gaps: %d", p.status)
	}
}

func TestGapsPageWithoutLog(t *testing.T) {
	s := start(t, Options{})
	r := do(t, "GET", s.url+"/gaps", nil)
	if r.status != 404 || !strings.Contains(string(r.body), "--gap-log") {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

// The page reads at most gapsPageBytes of the newest log and says so; the
// line the cut falls in is dropped, not reported as malformed.
func TestGapsPageReadsTheNewestBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gaps.jsonl")
	var log []byte
	at := time.Date(2026, 11, 25, 14, 3, 0, 0, time.UTC)
	for i := 0; i < 200; i++ {
		q := "old question about topic " + strconv.Itoa(i%7)
		if i >= 190 {
			q = "new question about billing exports"
		}
		ev := `{"kind":"refusal_hard","query":` + strconv.Quote(q) + `,"signals":{"evidence_top":0.1}}`
		log = gaps.AppendEventLine(log, []byte(ev), at.Add(time.Duration(i)*time.Minute), "d"+strconv.Itoa(i), gaps.PolicyRef{Name: "default"})
	}
	if err := os.WriteFile(path, log, 0o644); err != nil {
		t.Fatal(err)
	}
	// tail15 is the size of the newest 15 lines.
	lines := bytes.SplitAfter(log, []byte("\n")) // the last is empty
	tail15 := 0
	for _, l := range lines[len(lines)-16:] {
		tail15 += len(l)
	}
	defer func(old int64) { gapsPageBytes = old }(gapsPageBytes)

	for _, tc := range []struct {
		name  string
		limit int64
		want  int // events read
	}{
		{"whole log", int64(len(log)), 200},
		{"cut mid-line", int64(tail15 + 100), 15},
		{"cut on a line boundary", int64(tail15), 15},
		{"cut one byte into a line", int64(tail15 - 1), 14},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gapsPageBytes = tc.limit
			evs, notes, _, err := readGapLogTail(path, gapsPageBytes)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != tc.want {
				t.Errorf("%d events, want %d; notes %q", len(evs), tc.want, notes)
			}
			for _, n := range notes {
				if strings.Contains(n, "malformed") {
					t.Errorf("note %q: the cut line must be dropped quietly", n)
				}
			}
			if cut := tc.limit < int64(len(log)); cut != (len(notes) == 1 && strings.Contains(notes[0], "older events are left out")) {
				t.Errorf("notes %q", notes)
			}
		})
	}

	gapsPageBytes = int64(tail15)
	s := start(t, Options{GapLog: path})
	page := string(do(t, "GET", s.url+"/gaps", nil).body)
	if !strings.Contains(page, "15 events") || !strings.Contains(page, "this page reads its newest "+byteSize(gapsPageBytes)) ||
		!strings.Contains(page, "new question about billing exports") {
		t.Errorf("capped page: %s", page[strings.Index(page, "<body>"):][:2000])
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{512: "512 bytes", 2048: "2 KiB", 2560: "2.5 KiB", 16 << 20: "16 MiB", 120 << 20: "120 MiB", 3 << 19: "1.5 MiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// The page is built once per state of the gap log: reloads of an unchanged
// log serve the page kept (ctxgate_gaps_page_builds_total does not move),
// while a new event, or another file at the path with the same size and
// modification time, builds it again.
func TestGapsPageCachedUntilTheLogChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gaps.jsonl")
	s := start(t, Options{GapLog: path})
	builds := func() float64 { return metricValue(t, scrape(t, s), "ctxgate_gaps_page_builds_total") }
	get := func(query string) string {
		t.Helper()
		r := do(t, "GET", s.url+"/gaps"+query, nil)
		if r.status != 200 {
			t.Fatalf("GET /gaps%s: %d %s", query, r.status, r.body)
		}
		return string(r.body)
	}
	refuse := func(q string) {
		var req map[string]any
		json.Unmarshal(request(t, "default", "refuse_off_topic"), &req)
		req["query"] = q
		b, _ := json.Marshal(req)
		if g := do(t, "POST", s.url+"/v1/gate", b); g.header.Get("X-Ctxgate-Action") != "refuse" {
			t.Fatalf("gate: %d %s", g.status, g.body)
		}
	}
	refuse("Which plan includes priority support?")
	first := get("")
	for i := 0; i < 5; i++ {
		if p := get(""); p != first {
			t.Fatal("the same log gave another page")
		}
	}
	do(t, "HEAD", s.url+"/gaps", nil)
	if n := builds(); n != 1 {
		t.Fatalf("%v builds for six reads of one log, want 1", n)
	}
	get("?min_count=2")
	get("?min_count=02") // the same query
	if n := builds(); n != 2 {
		t.Fatalf("%v builds, want 2: one per query", n)
	}
	refuse("Is there an on-premises edition?")
	if p := get(""); !strings.Contains(p, "on-premises") || builds() != 3 {
		t.Fatalf("a new event: %v builds, page shows it: %v", builds(), strings.Contains(p, "on-premises"))
	}
	// Another file, same size and time: a new inode is a new log.
	s.gaps.Flush()
	old, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	swapped := bytes.ReplaceAll(raw, []byte("on-premises"), []byte("ON-PREMISES"))
	next := path + ".new"
	if err := os.WriteFile(next, swapped, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(next, old.ModTime(), old.ModTime())
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	if p := get(""); !strings.Contains(p, "ON-PREMISES") || builds() != 4 {
		t.Fatalf("a renamed-in file of the same size and time: %v builds, page shows it: %v", builds(), strings.Contains(p, "ON-PREMISES"))
	}
}

// With feedback tokens, /gaps takes one too: as a bearer token, or as the
// password of a browser's Basic login.
func TestGapsPageAuthenticated(t *testing.T) {
	token := "gaps-token-0123456789abcdef"
	s := start(t, Options{GapLog: filepath.Join(t.TempDir(), "gaps.jsonl"), FeedbackTokens: []string{token}})
	for _, c := range []struct {
		name   string
		hdr    []string
		status int
	}{
		{"no credentials", nil, 401},
		{"a wrong bearer token", []string{"Authorization", "Bearer nope-nope-nope-nope"}, 401},
		{"a wrong password", []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:nope"))}, 401},
		{"the bearer token", []string{"Authorization", "Bearer " + token}, 200},
		{"the token as a Basic password", []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte("anyone:"+token))}, 200},
	} {
		r := do(t, "GET", s.url+"/gaps", nil, c.hdr...)
		if r.status != c.status {
			t.Errorf("%s: %d, want %d", c.name, r.status, c.status)
		}
		if c.status == 401 {
			wantError(t, r, 401, codeUnauthorized, "")
			if ch := r.header.Values("WWW-Authenticate"); len(ch) != 2 || !strings.HasPrefix(ch[0], "Basic ") || !strings.HasPrefix(ch[1], "Bearer ") {
				t.Errorf("%s: challenges %q", c.name, ch)
			}
		}
	}
}
