package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/host"
	"github.com/ctxgate/ctxgate/host/decisionlog"
)

// readDecisionLog flushes the logs and reads the decision log back with the
// reader `ctxgate decisions join` uses, strictly.
func readDecisionLog(t testing.TB, s *testServer) []decisionlog.Decision {
	t.Helper()
	s.FlushLogs()
	f, err := os.Open(s.opts.DecisionLog.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ds, st, err := decisionlog.ReadDecisions(f, "decision log")
	if err != nil || st.TornTail != 0 {
		t.Fatalf("the decision log does not read back: %v %+v", err, st)
	}
	return ds
}

// TestDecisionLog: each decision is one line with the id the client got,
// the policy, the outcome exactly as the decision reported it, the chunk
// outcomes and, with Request, the request itself (compacted).
func TestDecisionLog(t *testing.T) {
	dir := t.TempDir()
	s := start(t, Options{DecisionLog: DecisionLogOptions{Path: filepath.Join(dir, "decisions.jsonl"), Request: true}})
	var replies []reply
	var reqs [][]byte
	for _, name := range []string{"inject", "refuse_off_topic", "caveat", "no_chunks"} {
		req := request(t, "default", name)
		reqs = append(reqs, req)
		replies = append(replies, post(t, s.url+"/v1/gate", req))
	}
	// Errors are not decisions: nothing is logged for them.
	wantError(t, post(t, s.url+"/v1/gate", []byte(`{"query":3}`)), 422, "bad_field", "query")

	ds := readDecisionLog(t, s)
	if len(ds) != len(replies) {
		t.Fatalf("%d lines for %d decisions", len(ds), len(replies))
	}
	for i, r := range replies {
		d, got := mustDecision(t, r.body), ds[i]
		var full struct {
			Band   string           `json:"band"`
			Chunks []map[string]any `json:"chunks"`
		}
		decode(t, r.body, &full)
		if got.ID != r.header.Get(HeaderDecisionID) || got.Path != "/v1/gate" || got.Action != d.Action || got.Level != d.Level ||
			got.Band != full.Band || got.Confidence != d.Confidence || string(got.Signals) != string(d.Signals) ||
			got.Policy != decisionlog.PolicyRef(d.Policy) || got.Timestamp.IsZero() || got.Timestamp.Location().String() != "UTC" {
			t.Errorf("line %d = %+v\nwant the decision %s", i+1, got, truncate(r.body))
		}
		if len(got.Chunks) != len(full.Chunks) {
			t.Fatalf("line %d: %d chunk outcomes, the decision has %d", i+1, len(got.Chunks), len(full.Chunks))
		}
		for j, c := range got.Chunks {
			want := full.Chunks[j]
			if c.ID != want["id"] || c.DocID != want["doc_id"] || c.Tag != want["tag"] || c.Kept != want["kept"] || c.Reason != want["reason"] {
				t.Errorf("line %d chunk %d = %+v, want %v", i+1, j, c, want)
			}
		}
		var compact bytes.Buffer
		json.Compact(&compact, reqs[i])
		if string(got.Input) != compact.String() || got.Erased != nil || got.Omitted != nil {
			t.Errorf("line %d input = %s\nwant %s", i+1, got.Input, compact.String())
		}
	}
	// Decision ids are unguessable: 43 URL-safe characters, all different.
	seen := map[string]bool{}
	for _, d := range ds {
		if len(d.ID) != 43 || strings.Trim(d.ID, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" || seen[d.ID] {
			t.Errorf("id %q", d.ID)
		}
		seen[d.ID] = true
	}
	fams := scrape(t, s)
	if n := metricValue(t, fams, "ctxgate_decision_log_lines_total"); n != 4 {
		t.Errorf("ctxgate_decision_log_lines_total = %v, want 4", n)
	}
}

// maskedRequest carries a distinct marker in every field that holds text or
// an embedding, so a leak is found by searching the file for it.
var maskedRequest = []byte(`{
  "query": "QUERYMARK how do I reset my password",
  "query_embedding": [0.1234567891, 0.5, 0.25],
  "now": "2026-05-01T12:00:00Z",
  "chunks": [
    {"id": "kb1", "doc_id": "kb/security", "title": "TITLEMARK reset",
     "text": "TEXTMARK To reset your password, open Settings and click reset password.",
     "scores": {"vector": 0.88, "bm25": 17.2}, "embedding": [0.9876543219, 0.5, 0.25],
     "metadata": {"author": "METAMARK"}, "updated_at": "2026-04-01T00:00:00Z", "trust": 0.9},
    {"id": "kb2", "doc_id": "kb/sso", "title": "TITLEMARK sso",
     "text": "TEXTMARK Accounts with single sign-on reset the password at the identity provider.",
     "scores": {"vector": 0.71}, "embedding": [0.9876543219, 0.4, 0.3], "untrusted": true}
  ]
}`)

var (
	queryMarks = []string{"QUERYMARK", "0.1234567891"}
	textMarks  = []string{"TEXTMARK", "TITLEMARK", "METAMARK", "0.9876543219"}
)

// TestDecisionLogMask: with a group masked, none of its text (nor its
// embeddings) reaches the file, found by searching the file's bytes; what
// is not masked is kept, and the masked request still reads as a request
// with its ids and scores. Without Request, no text is logged at all.
func TestDecisionLogMask(t *testing.T) {
	for _, c := range []struct {
		name       string
		request    bool
		mask       []string
		erased     []string
		gone, kept []string
	}{
		{"query", true, []string{"query"}, []string{"query"}, queryMarks, textMarks},
		{"text", true, []string{"text"}, []string{"text"}, textMarks, queryMarks},
		{"query,text", true, []string{"query", "text"}, []string{"query", "text"}, append(queryMarks, textMarks...), nil},
		{"all", true, []string{"all"}, []string{"query", "text"}, append(queryMarks, textMarks...), nil},
		{"no request", false, nil, nil, append(queryMarks, textMarks...), nil},
		{"no mask", true, nil, nil, nil, append(queryMarks, textMarks...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "decisions.jsonl")
			s := start(t, Options{DecisionLog: DecisionLogOptions{Path: path, Request: c.request, Mask: c.mask}})
			r := post(t, s.url+"/v1/gate", maskedRequest)
			if r.status != 200 {
				t.Fatalf("gate: %d %s", r.status, r.body)
			}
			ds := readDecisionLog(t, s)
			file := readFile(t, path)
			for _, m := range c.gone {
				if strings.Contains(file, m) {
					t.Errorf("%s reached the log:\n%s", m, file)
				}
			}
			for _, m := range c.kept {
				if !strings.Contains(file, m) {
					t.Errorf("%s is not in the log:\n%s", m, file)
				}
			}
			if strings.Join(ds[0].Erased, ",") != strings.Join(c.erased, ",") {
				t.Errorf("erased = %v, want %v", ds[0].Erased, c.erased)
			}
			if !c.request {
				if ds[0].Input != nil {
					t.Errorf("input logged without Request: %s", ds[0].Input)
				}
				return
			}
			var in struct {
				Now    string `json:"now"`
				Chunks []struct {
					ID     string             `json:"id"`
					DocID  string             `json:"doc_id"`
					Scores map[string]float64 `json:"scores"`
					Trust  *float64           `json:"trust"`
				} `json:"chunks"`
			}
			decode(t, ds[0].Input, &in)
			if in.Now == "" || len(in.Chunks) != 2 || in.Chunks[0].ID != "kb1" || in.Chunks[0].DocID != "kb/security" ||
				in.Chunks[0].Scores["bm25"] != 17.2 || in.Chunks[0].Trust == nil || in.Chunks[1].Scores["vector"] != 0.71 {
				t.Errorf("the masked request lost what it keeps: %s", ds[0].Input)
			}
		})
	}
	if _, err := New(t.Context(), Options{Native: true, Logger: discardLog, DecisionLog: DecisionLogOptions{Path: filepath.Join(t.TempDir(), "d"), Mask: []string{"queries"}}}); err == nil ||
		!strings.Contains(err.Error(), `unknown group "queries"`) {
		t.Errorf("an unknown mask group: %v", err)
	}
}

// TestDecisionLogMaskResultsPerQuery: multi-query requests are masked in
// every list; a field the gate does not know is never logged when masking.
func TestDecisionLogMaskResultsPerQuery(t *testing.T) {
	l := &decisionLog{maskQuery: true, maskText: true, maxLine: 1 << 20}
	in, ok := l.input([]byte(`{"query":"QUERYMARK","results_per_query":[[{"id":"a","text":"TEXTMARK","title":"TITLEMARK","scores":{"vector":0.5}}],` +
		`[{"id":"b","doc_id":"d","text":"TEXTMARK","embedding":[0.9876543219]}]],"extra":"EXTRAMARK","chunks":["TEXTMARK"]}`))
	want := `{"results_per_query":[[{"id":"a","scores":{"vector":0.5}}],[{"id":"b","doc_id":"d"}]],"chunks":[null]}`
	if !ok || string(in) != want {
		t.Fatalf("masked = %s, want %s", in, want)
	}
	// A key spelled with an escape is the same key: masked.
	in, _ = l.input([]byte(`{"qu\u0065ry":"QUERYMARK","chunks":[{"id":"a","t\u0065xt":"TEXTMARK"}]}`))
	if strings.Contains(string(in), "MARK") {
		t.Fatalf("an escaped key leaked: %s", in)
	}
}

// TestDecisionLogLineCap: a line over the cap is written without the
// request, then without the chunk outcomes, and says so; it is still one
// whole line that reads back.
func TestDecisionLogLineCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.jsonl")
	s := start(t, Options{DecisionLog: DecisionLogOptions{Path: path, Request: true, MaxLineBytes: 4096}})
	small := request(t, "default", "inject")
	var big map[string]any
	decode(t, small, &big)
	chunks := big["chunks"].([]any)
	chunks[0].(map[string]any)["text"] = strings.Repeat("password reset settings ", 400) // ~9.6 KB
	post(t, s.url+"/v1/gate", mustJSON(t, big))
	// Many chunks with long ids: the outcomes alone pass the cap.
	var many []map[string]any
	for i := range 40 {
		many = append(many, map[string]any{"id": strings.Repeat("x", 150) + string(rune('A'+i%26)) + strings.Repeat("y", i),
			"text": "reset your password in settings", "scores": map[string]any{"vector": 0.8}})
	}
	post(t, s.url+"/v1/gate", mustJSON(t, map[string]any{"query": "how do I reset my password", "chunks": many}))
	post(t, s.url+"/v1/gate", small)

	ds := readDecisionLog(t, s)
	if len(ds) != 3 {
		t.Fatalf("%d lines", len(ds))
	}
	if ds[0].Input != nil || strings.Join(ds[0].Omitted, ",") != "input" || len(ds[0].Chunks) == 0 {
		t.Errorf("big request: input %d bytes, omitted %v, %d chunks", len(ds[0].Input), ds[0].Omitted, len(ds[0].Chunks))
	}
	if ds[1].Input != nil || strings.Join(ds[1].Omitted, ",") != "input,chunks" || ds[1].Chunks != nil || ds[1].Action == "" {
		t.Errorf("many long ids: omitted %v, %d chunks", ds[1].Omitted, len(ds[1].Chunks))
	}
	if ds[2].Input == nil || ds[2].Omitted != nil {
		t.Errorf("a small request after them: %+v", ds[2])
	}
	for i, line := range strings.Split(strings.TrimSpace(readFile(t, path)), "\n") {
		if len(line)+1 > 4096 {
			t.Errorf("line %d is %d bytes, over the cap", i+1, len(line)+1)
		}
	}
	fams := scrape(t, s)
	if in, ch := metricValue(t, fams, "ctxgate_decision_log_omitted_total", "member", "input"),
		metricValue(t, fams, "ctxgate_decision_log_omitted_total", "member", "chunks"); in != 2 || ch != 1 {
		t.Errorf("omitted: input %v chunks %v, want 2 and 1", in, ch)
	}
}

// TestDecisionLogGateway: a chat request's decision is logged under its
// endpoint, with the gate request built from the chat body as its input,
// and a local refusal is logged like any decision.
func TestDecisionLogGateway(t *testing.T) {
	up := newUpstream(t, "Open Settings [S1].")
	path := filepath.Join(t.TempDir(), "decisions.jsonl")
	s := start(t, Options{Upstream: up.ts.URL, DecisionLog: DecisionLogOptions{Path: path, Request: true, Mask: []string{"text"}}})
	inject, q := chatFor(t, request(t, "default", "inject"), false)
	refuse, _ := chatFor(t, request(t, "default", "refuse_off_topic"), false)
	r1 := post(t, s.url+"/v1/chat/completions", inject)
	r2 := post(t, s.url+"/v1/chat/completions", refuse)
	ds := readDecisionLog(t, s)
	if len(ds) != 2 || ds[0].Path != "/v1/chat/completions" || ds[0].ID != r1.header.Get(HeaderDecisionID) ||
		ds[1].ID != r2.header.Get(HeaderDecisionID) || ds[0].Action != "inject" || ds[1].Action != "refuse" {
		t.Fatalf("gateway decisions: %+v", ds)
	}
	var in struct {
		Query  string           `json:"query"`
		Chunks []map[string]any `json:"chunks"`
	}
	decode(t, ds[0].Input, &in)
	if in.Query != q || len(in.Chunks) != 2 || in.Chunks[0]["text"] != nil || in.Chunks[0]["id"] != "kb1" {
		t.Fatalf("gateway input: %s", ds[0].Input)
	}
}

// TestDecisionLogConcurrent: decisions from many clients at once each get
// one whole line, under their own id, and the lines counter agrees.
func TestDecisionLogConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.jsonl")
	s := start(t, Options{Native: true, DecisionLog: DecisionLogOptions{Path: path, Request: true, Mask: []string{"query"}}})
	const clients, each = 8, 40
	ids := make(chan string, clients*each)
	done := make(chan struct{})
	for range clients {
		go func() {
			defer func() { done <- struct{}{} }()
			for range each {
				ids <- post(t, s.url+"/v1/gate", maskedRequest).header.Get(HeaderDecisionID)
			}
		}()
	}
	for range clients {
		<-done
	}
	close(ids)
	ds := readDecisionLog(t, s)
	logged := map[string]bool{}
	for _, d := range ds {
		logged[d.ID] = true
	}
	for id := range ids {
		if !logged[id] {
			t.Fatalf("decision %q has no line", id)
		}
	}
	if len(ds) != clients*each || len(logged) != clients*each || strings.Contains(readFile(t, path), "QUERYMARK") {
		t.Fatalf("%d lines, %d ids, want %d", len(ds), len(logged), clients*each)
	}
	if n := metricValue(t, scrape(t, s), "ctxgate_decision_log_lines_total"); n != clients*each {
		t.Fatalf("lines counter %v", n)
	}
}

// BenchmarkDecisionLog: the handler over the native core (the server's own
// cost per decision, BenchmarkHandlerNative) with the decision log off and
// on. The line is built on the handler's goroutine; the write and fsync are
// the writer's, batched, and show here only as back-pressure.
func BenchmarkDecisionLog(b *testing.B) {
	for _, c := range []struct {
		name string
		dl   DecisionLogOptions
	}{
		{"off", DecisionLogOptions{}},
		{"outcome", DecisionLogOptions{Path: "d.jsonl"}},
		{"request", DecisionLogOptions{Path: "d.jsonl", Request: true}},
		{"request_masked", DecisionLogOptions{Path: "d.jsonl", Request: true, Mask: []string{"all"}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			dl := c.dl
			if dl.Path != "" {
				dl.Path = filepath.Join(b.TempDir(), dl.Path)
			}
			s := start(b, Options{Native: true, DecisionLog: dl})
			h := s.Handler()
			req := benchRequest(b)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/gate", bytes.NewReader(req)))
				if w.Code != 200 {
					b.Fatal(w.Code, w.Body.String())
				}
			}
			s.FlushLogs()
		})
	}
}

// BenchmarkDecisionLine: building one line (what the handler pays; the
// writer goroutine writes it) for the DL19-sized inject request, against
// the native decision it records (BenchmarkEvaluateNative).
func BenchmarkDecisionLine(b *testing.B) {
	req := benchRequest(b)
	n, err := host.NewNative(nil)
	if err != nil {
		b.Fatal(err)
	}
	out, err := n.Evaluate(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	d := mustDecision(b, out)
	d.request, d.path = req, "/v1/gate"
	for _, c := range []struct {
		name string
		l    decisionLog
	}{
		{"outcome", decisionLog{maxLine: DefaultDecisionLogMaxLineBytes}},
		{"request", decisionLog{maxLine: DefaultDecisionLogMaxLineBytes, request: true}},
		{"request_masked", decisionLog{maxLine: DefaultDecisionLogMaxLineBytes, request: true, maskQuery: true, maskText: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			now := time.Now()
			for b.Loop() {
				c.l.line("id", d, now)
			}
		})
	}
}
