package gate

import (
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/internal/encode"
	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/policies"
)

// checkDecisionSize holds the size walk to the writer: the exact size is
// what AppendDecision writes, and the bound is no less. Every golden
// request's decision is checked in TestEvaluateMatchesDecide.
func checkDecisionSize(t *testing.T, d *Decision) {
	t.Helper()
	n := len(AppendDecision(nil, d))
	if exact := (encode.Sizer{Exact: true}).Decision(d, nil); exact != n {
		t.Fatalf("exact size %d, AppendDecision writes %d: %s", exact, n, AppendDecision(nil, d))
	}
	if bound := (encode.Sizer{}).Decision(d, nil); bound < n {
		t.Fatalf("bound %d under the %d bytes written", bound, n)
	}
}

// sizeRequest is a request whose chunks and query carry s everywhere the
// decision writes them.
func sizeRequest(s string, untrusted bool) *Request {
	q := "reset password " + s
	if len(q) > 4096 {
		q = q[:4096]
	}
	req := &Request{Query: strings.TrimSpace(q)}
	for i := 0; i < 3; i++ {
		req.Chunks = append(req.Chunks, Chunk{ID: s + "#" + string(rune('a'+i)), DocID: s, Title: s,
			Text: "reset your password " + s, Untrusted: untrusted && i == 1,
			Scores: Scores{Vector: 0.9 - 0.1*float64(i), HasVector: true, BM25: 1e12, HasBM25: true}})
	}
	return req
}

func FuzzDecisionSize(f *testing.F) {
	for _, s := range escapeCases {
		f.Add(s, false)
	}
	f.Add(strings.Repeat("<", 100), true)
	var engines []*Engine
	for _, name := range []string{"default", "support-agent", "rag-confidence", "sufficient-context", "wikigr"} {
		engines = append(engines, presetEngine(f, name))
	}
	f.Fuzz(func(t *testing.T, s string, untrusted bool) {
		for _, e := range engines {
			req := sizeRequest(s, untrusted)
			d, err := e.Decide(req)
			if err != nil {
				if e, ok := err.(*Error); ok && e.Code != CodeBadField {
					t.Fatalf("Decide: %v", err)
				}
				return
			}
			checkDecisionSize(t, d)
		}
	})
}

func TestDecisionSizeEscapes(t *testing.T) {
	for _, s := range escapeCases {
		for _, name := range []string{"default", "support-agent", "wikigr"} {
			d, err := presetEngine(t, name).Decide(sizeRequest(s, true))
			if err != nil {
				continue
			}
			checkDecisionSize(t, d)
		}
	}
}

// limitPolicy is preset name with limits.max_decision_bytes set to n.
func limitPolicy(t testing.TB, name string, n int) *Engine {
	t.Helper()
	pj, _ := policies.Get(name)
	s := strings.Replace(string(pj), "{", `{"limits":{"max_decision_bytes":`+itoa(n)+`},`, 1)
	e, err := NewEngine([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// ltRequest is n chunks of text of '<' (and ids of '<' when ids is set),
// chunkBytes each.
func ltRequest(n, chunkBytes int, ids bool) []byte {
	var b strings.Builder
	b.WriteString(`{"query":"q","chunks":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		id := "c" + itoa(i)
		if ids {
			id = strings.Repeat("<", chunkBytes) + id
		}
		b.WriteString(`{"id":"` + id + `","text":"` + strings.Repeat("<", chunkBytes) + `","scores":{"vector":0.9}}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// TestOutputLimit: a decision over limits.max_decision_bytes is a limit
// error naming the chunks and the limit, from Evaluate and from Decide
// alike, and nothing is written. 32 chunk texts of 64 KiB of '<' (2 MiB,
// the max_total_bytes then) made a 12.6 MB decision; 1000 ids of 3.9 KiB of
// '<' one of 25 MB. Within today's limits: 12 texts of 64 KiB of '<' (768
// KiB), 1000 ids of '<' of 500 bytes.
func TestOutputLimit(t *testing.T) {
	e := presetEngine(t, "default")
	for _, body := range [][]byte{ltRequest(12, 64<<10-8, false), ltRequest(1000, 500, true)} {
		out, err := e.Evaluate(body)
		ge, ok := err.(*Error)
		if !ok || ge.Code != CodeLimit || ge.Field != "chunks" || !strings.Contains(ge.Message, "(max_decision_bytes)") {
			t.Fatalf("%d-byte request: Evaluate = %d bytes, %v; want a max_decision_bytes limit error on chunks", len(body), len(out), err)
		}
		req, err := DecodeRequest(body, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Decide(req); err == nil || err.Error() != ge.Error() {
			t.Fatalf("Decide: %v, Evaluate: %v", err, ge)
		}
		// The engine is fine afterwards.
		if _, err := e.Evaluate(ltRequest(2, 10, false)); err != nil {
			t.Fatalf("after the limit error: %v", err)
		}
	}
	// The limit is on the bytes written: a decision of exactly the limit
	// passes, one byte less does not.
	body := ltRequest(3, 1000, false)
	out, err := e.Evaluate(body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := limitPolicy(t, "default", len(out)).Evaluate(body); err != nil {
		t.Errorf("a %d-byte decision under max_decision_bytes %d: %v", len(out), len(out), err)
	}
	_, err = limitPolicy(t, "default", len(out)-1).Evaluate(body)
	want := "chunks: the decision would be " + itoa(len(out)) + " bytes of JSON; the limit is " + itoa(len(out)-1) + " (max_decision_bytes)"
	if err == nil || err.Error() != want {
		t.Errorf("one byte over: %v, want %q", err, want)
	}
}

// TestValidationSizeExact: the validation's size is counted exactly: a
// limit of its length passes with the same bytes, one byte less is a limit
// error naming the answer.
func TestValidationSizeExact(t *testing.T) {
	e := presetEngine(t, "support-agent")
	pj, _ := policies.Get("support-agent")
	engine := func(n int) *Engine {
		s := strings.Replace(string(pj), "{", `{"limits":{"max_decision_bytes":`+itoa(n)+`},`, 1)
		l, err := NewEngine([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for i, s := range answerCases {
		in := `{"query":"q","answer":` + string(jsonx.AppendString(nil, s)) + `,"tags":["S1","S2"]}`
		out, err := e.Validate([]byte(in))
		if err != nil {
			continue
		}
		if i%3 != 0 { // a third of the cases: each is two engines
			continue
		}
		if got, err := engine(len(out)).Validate([]byte(in)); err != nil || string(got) != string(out) {
			t.Fatalf("%q under a limit of its %d bytes: %v", s, len(out), err)
		}
		_, err = engine(len(out) - 1).Validate([]byte(in))
		if ge, ok := err.(*Error); !ok || ge.Code != CodeLimit || ge.Field != "answer" {
			t.Fatalf("%q one byte over the limit: %v", s, err)
		}
	}
}

// TestValidationLimit: an answer whose validation would be megabytes of
// unknown tags is a limit error, and the engine answers the same input the
// same way every time (the unknown-tag bitmap is cleared after each).
func TestValidationLimit(t *testing.T) {
	e := presetEngine(t, "default")
	var b strings.Builder
	b.WriteString(`{"query":"q","tags":["S1"],"answer":"`)
	for i := 0; b.Len() < 1<<20-16; i++ {
		b.WriteString("[S" + itoa(i+2) + "]")
	}
	// 1 MiB of unknown tags is more than 1 MiB of validation: over a 1 MiB
	// limit.
	big := []byte(b.String() + `"}`)
	_, err := limitPolicy(t, "default", 1<<20).Validate(big)
	if ge, ok := err.(*Error); !ok || ge.Code != CodeLimit || ge.Field != "answer" || !strings.Contains(ge.Message, "(max_decision_bytes)") {
		t.Fatalf("1 MiB of unknown tags: %v", err)
	}
	mid := []byte(`{"query":"q","tags":["S1"],"answer":"` + b.String()[len(`{"query":"q","tags":["S1"],"answer":"`):512<<10] + `"}`)
	first, err := e.Validate(mid)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if again, err := e.Validate(mid); err != nil || string(again) != string(first) {
			t.Fatalf("call %d: %d bytes (%v), first call %d", i+2, len(again), err, len(first))
		}
	}
}
