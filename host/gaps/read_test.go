package gaps

import (
	"reflect"
	"strings"
	"testing"
)

const goodLine = `{"kind":"refusal_hard","query":"How do I rotate API keys?","query_embedding":[0.1,0.2],"confidence":0.12,` +
	`"signals":{"max_similarity":0.21,"coverage":0.3,"future_signal":7},"top_chunks":[{"id":"c1","doc_id":"d1","score":0.21}],` +
	`"time":"2026-03-02T10:00:00Z","decision_id":"dec-1","policy":{"name":"support-agent","version":"1","sha256":"ab"}}`

func TestReadEventsGood(t *testing.T) {
	in := "\xef\xbb\xbf" + goodLine + "\r\n\n   \n" +
		`{"action":"refuse","gap_event":{"kind":"refusal_soft","query":"q2","signals":{}},"policy":{"name":"p"},"time":"2026-03-02T11:00:00+01:00"}` + "\n" +
		`{"action":"inject","gap_event":null}` // no trailing newline
	evs, st, err := ReadEvents(strings.NewReader(in), ReadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Lines != 5 || st.Events != 2 || st.NotGaps != 1 || st.Skipped != 0 {
		t.Errorf("stats %+v", st)
	}
	e := evs[0]
	if e.Kind != KindRefusalHard || e.Query != "How do I rotate API keys?" || !reflect.DeepEqual(e.QueryEmbedding, []float64{0.1, 0.2}) ||
		!e.HasConfidence || e.Confidence != 0.12 || e.Signals["future_signal"] != 7 || e.TopChunks[0].DocID != "d1" ||
		!e.HasTime || e.DecisionID != "dec-1" || e.Policy.Name != "support-agent" || e.Line != 1 {
		t.Errorf("event %+v", e)
	}
	if e := evs[1]; e.Kind != KindRefusalSoft || e.Policy.Name != "p" || e.Line != 4 || !e.HasTime || e.Time.Hour() != 11 {
		t.Errorf("nested event %+v", e)
	}
}

func TestReadEventsBad(t *testing.T) {
	long := `{"kind":"refusal_hard","query":"` + strings.Repeat("x", 300) + `"}`
	for _, tc := range []struct {
		name, line, want string
	}{
		{"not json", `{"kind":`, "line 2: not JSON"},
		{"array", `[1,2]`, "line 2: must be an object"},
		{"no kind", `{"query":"q"}`, "line 2: kind: missing"},
		{"bad kind", `{"kind":"refusal","query":"q"}`, `line 2: kind: must be one of`},
		{"no query", `{"kind":"thumbs_down"}`, "line 2: query: missing or empty"},
		{"blank query", `{"kind":"thumbs_down","query":"  "}`, "line 2: query: missing or empty"},
		{"signal type", `{"kind":"thumbs_down","query":"q","signals":{"coverage":"high"}}`, "line 2: signals.coverage: must be a number"},
		{"embedding type", `{"kind":"thumbs_down","query":"q","query_embedding":[1,"a"]}`, "line 2: query_embedding: must be a number"},
		{"time", `{"kind":"thumbs_down","query":"q","time":"yesterday"}`, `line 2: time: not RFC 3339`},
		{"nested bad", `{"gap_event":{"kind":"low_confidence","query":"q","confidence":"x"}}`, "line 2: gap_event.confidence: must be a number"},
		{"too long", long, "line 2: line longer than 200 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := `{"kind":"low_confidence","query":"fine"}` + "\n" + tc.line + "\n" + `{"kind":"low_confidence","query":"after"}` + "\n"
			_, _, err := ReadEvents(strings.NewReader(in), ReadOptions{MaxLineBytes: 200, Strict: true})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want prefix %q", err, tc.want)
			}
			evs, st, err := ReadEvents(strings.NewReader(in), ReadOptions{MaxLineBytes: 200})
			if err != nil || len(evs) != 2 || st.Skipped != 1 || len(st.FirstErrors) != 1 || evs[1].Query != "after" || evs[1].Line != 3 {
				t.Fatalf("skip: %v %+v %+v", err, st, evs)
			}
		})
	}
}

// A line far over the bound is skipped without being held in memory, and the
// reader resynchronises on the next line.
func TestReadEventsHugeLine(t *testing.T) {
	in := strings.Repeat("y", 3<<20) + "\n" + `{"kind":"low_confidence","query":"next"}`
	evs, st, err := ReadEvents(strings.NewReader(in), ReadOptions{MaxLineBytes: 1 << 20})
	if err != nil || len(evs) != 1 || st.Skipped != 1 || evs[0].Line != 2 {
		t.Fatalf("%v %+v %+v", err, st, evs)
	}
}

func TestZeroEmbeddingFallsBackToLexical(t *testing.T) {
	evs, _, err := ReadEvents(strings.NewReader(`{"kind":"refusal_hard","query":"q","query_embedding":[0,0,0]}`), ReadOptions{})
	if err != nil || evs[0].QueryEmbedding != nil {
		t.Fatalf("%v %+v", err, evs)
	}
}

func TestQueryTerms(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"How do I reset my password?", []string{"password", "reset"}},
		{"resetting passwords", []string{"password", "reset"}},
		{"Is there a way to change the billing policies?", []string{"bill", "chang", "policy"}},
		{"changed billing policy", []string{"bill", "chang", "policy"}},
		{"API keys for HTTP2 v1", []string{"api", "http2", "key", "v1"}},
		{"what is it?", nil},
		{"How many times are webhooks retried?", []string{"retry", "tim", "webhook"}},
		{"Status of the analysis process", []string{"analysis", "process", "status"}},
		{"Ünïcode naïve café", []string{"café", "naïv", "ünïcod"}},
	} {
		got := queryTerms(tc.q)
		if len(got) == 0 && len(tc.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("queryTerms(%q) = %q, want %q", tc.q, got, tc.want)
		}
	}
	if a, b := normQuery("  What is   SAML? "), normQuery("what is saml"); a != b {
		t.Errorf("normQuery: %q != %q", a, b)
	}
}

// TestReadTornTail: with TornTail, a last line without a newline that does
// not read is skipped and reported in TornLast, strictly or not; a bad line
// with its newline is an error strictly and skipped and counted otherwise; a
// good unterminated line reads. Without TornTail the torn line is one more
// malformed line.
func TestReadTornTail(t *testing.T) {
	good := `{"kind":"refusal_hard","query":"a"}` + "\n"
	for _, c := range []struct {
		in                      string
		torn, strict            bool
		events, tornLast, skips int
		wantErr                 bool
	}{
		{good + `{"kind":"refu`, true, true, 1, 2, 0, false},
		{good + `{"kind":"refu`, true, false, 1, 2, 0, false},
		{good + `{"kind":"refu`, false, true, 0, 0, 0, true},
		{good + `{"kind":"refu`, false, false, 1, 0, 1, false},
		{good + `{"kind":"refu` + "\n", true, true, 0, 0, 0, true},
		{good + `{"kind":"refu` + "\n" + good, true, false, 2, 0, 1, false},
		{good + `{"kind":"refusal_hard","query":"b"}`, true, true, 2, 0, 0, false},
	} {
		evs, st, err := ReadEvents(strings.NewReader(c.in), ReadOptions{TornTail: c.torn, Strict: c.strict})
		if (err != nil) != c.wantErr || err == nil && (len(evs) != c.events || st.TornLast != c.tornLast || st.Skipped != c.skips) {
			t.Errorf("%q torn=%v strict=%v: %d events, TornLast %d, skipped %d, err %v", c.in, c.torn, c.strict, len(evs), st.TornLast, st.Skipped, err)
		}
	}
}
