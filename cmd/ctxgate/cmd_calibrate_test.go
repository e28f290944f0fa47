package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/gate"
	"github.com/ctxgate/ctxgate/host/decisionlog"
)

// writeExamples writes n labeled examples a user might have: a question,
// three retrieved chunks with cosines, and whether they answer it. An
// answerable request's best chunk holds most of the question's terms and
// scores higher; the two overlap, as real retrievals do.
func writeExamples(t *testing.T, path string, n int, seed int64) {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	var b strings.Builder
	for i := 0; i < n; i++ {
		label := i%2 == 0
		terms := []string{fmt.Sprintf("alpha%d", i), fmt.Sprintf("beta%d", i), fmt.Sprintf("gamma%d", i), fmt.Sprintf("delta%d", i)}
		hit := 0.35
		top := 0.55 + 0.3*r.Float64()
		if label {
			hit, top = 0.75, 0.65+0.3*r.Float64()
		}
		var chunks []string
		for c := 0; c < 3; c++ {
			var words []string
			for _, term := range terms {
				if r.Float64() < hit {
					words = append(words, term)
				}
			}
			words = append(words, "some", "filler", "words", fmt.Sprintf("noise%d", r.Intn(1000)))
			chunks = append(chunks, fmt.Sprintf(`{"id": "c%d-%d", "doc_id": "d%d", "text": %q, "scores": {"vector": %.4f}}`,
				i, c, r.Intn(3), strings.Join(words, " "), top-0.05*float64(c)))
		}
		fmt.Fprintf(&b, `{"request": {"query": %q, "chunks": [%s]}, "label": %d}`+"\n",
			strings.Join(terms, " "), strings.Join(chunks, ", "), map[bool]int{true: 1, false: 0}[label])
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// From labeled examples to a calibrated, signed policy that the Wasm
// module loads under --trust and decides with as the native core does.
func TestCalibrateCommand(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	writeExamples(t, p("examples.jsonl"), 400, 1)
	code, out, errOut := cli(t, "", "calibrate", "--data", p("examples.jsonl"), "--max-hallucination", "0.1",
		"--out", p("policy.json"), "--report", p("report.md"), "--report", p("report.json"))
	if code != exitOK {
		t.Fatalf("calibrate: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.HasPrefix(out, "With probability at least 0.9 over the calibration sample, the hallucination rate") ||
		!strings.Contains(out, "wrote "+p("policy.json")) {
		t.Errorf("stdout:\n%s", out)
	}
	policy, err := os.ReadFile(p("policy.json"))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := gate.DecodePolicy(policy)
	if err != nil {
		t.Fatalf("the written policy does not validate: %v", err)
	}
	if !strings.HasPrefix(pol.Version, "5-calibrated.20") {
		t.Errorf("version %q: want the base's and the UTC time", pol.Version)
	}
	md, _ := os.ReadFile(p("report.md"))
	for _, want := range []string{"# Calibration report: default 5-calibrated.", "**Guarantee.**", "## The bound", "## Held-out AUROC"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	var rep struct {
		Target string `json:"target"`
		Bound  struct {
			N      int     `json:"n"`
			PValue float64 `json:"p_value"`
		} `json:"bound"`
		Policy struct {
			SHA256 string `json:"sha256"`
		} `json:"policy"`
	}
	if raw, _ := os.ReadFile(p("report.json")); json.Unmarshal(raw, &rep) != nil || rep.Target != "hallucination" || rep.Bound.N == 0 || rep.Bound.PValue > 0.1 {
		t.Errorf("report.json: %+v", rep)
	}

	// Sign it, and decide with the bundle in the Wasm module under --trust.
	if code, _, errOut := cli(t, "", "keygen", "--out", p("ops")); code != exitOK {
		t.Fatal(errOut)
	}
	code, bundleJSON, errOut := cli(t, "", "sign", "--key", p("ops.key"), p("policy.json"))
	if code != exitOK {
		t.Fatalf("sign: %s", errOut)
	}
	os.WriteFile(p("bundle.json"), []byte(bundleJSON), 0o644)
	req := `{"query": "alpha1 beta1 gamma1", "chunks": [{"id": "a", "text": "alpha1 beta1 gamma1 are here", "scores": {"vector": 0.9}}]}`
	args := append([]string{"eval", "--policy", p("bundle.json"), "--trust", p("ops.pub")}, wasmFlags(t, "tinygo")...)
	code, wasmOut, errOut := cli(t, req, args...)
	if code != exitOK {
		t.Fatalf("eval in Wasm with the signed calibrated policy: %s", errOut)
	}
	code, nativeOut, errOut := cli(t, req, "eval", "--native", "--policy", p("policy.json"))
	if code != exitOK {
		t.Fatal(errOut)
	}
	if wasmOut != nativeOut || !strings.Contains(wasmOut, `"sha256":"`+rep.Policy.SHA256+`"`) {
		t.Errorf("the Wasm module and the native core decide differently, or not with the calibrated policy:\n%s\n%s", wasmOut, nativeOut)
	}
}

// Bad input is rejected naming the file, line and field, and nothing is
// written; so is a bound the examples cannot guarantee.
func TestCalibrateCommandRefuses(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	writeExamples(t, p("good.jsonl"), 400, 2)
	good, _ := os.ReadFile(p("good.jsonl"))
	lines := strings.SplitAfter(string(good), "\n")
	os.WriteFile(p("bad.jsonl"), []byte(lines[0]+lines[1]+`{"request": {"query": "q", "chunks": []}, "label": "yes"}`+"\n"+lines[3]), 0o644)
	os.WriteFile(p("badreq.jsonl"), []byte(lines[0]+`{"request": {"query": "q", "chunks": [{"id": "a", "text": "t", "scores": {"vector": "high"}}]}, "label": 1}`+"\n"), 0o644)
	os.WriteFile(p("few.jsonl"), []byte(strings.Join(lines[:16], "")), 0o644)
	os.WriteFile(p("twice.jsonl"), []byte(lines[0]+strings.Replace(lines[1], `"label": `, `"label": 1, "label": `, 1)), 0o644)
	// Every chunk scored at the float64 limit: the saturations' median
	// overflowed to +Inf, and calibrate failed writing it into its own JSON.
	os.WriteFile(p("huge.jsonl"), []byte(strings.ReplaceAll(string(good), `"scores": {`, `"scores": {"bm25": 1.797e308, `)), 0o644)
	os.WriteFile(p("rag.json"), []byte(`{"name": "x", "version": "1"}`), 0o644)
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"a bad label", []string{"--data", p("bad.jsonl"), "--max-error", "0.1"}, exitFail, "bad.jsonl: line 3: label: must be 1 or 0"},
		{"a bad request", []string{"--data", p("badreq.jsonl"), "--max-error", "0.1"}, exitFail, "badreq.jsonl: line 2: request.chunks[0].scores.vector:"},
		{"a label given twice", []string{"--data", p("twice.jsonl"), "--max-error", "0.1"}, exitFail, `twice.jsonl: line 2: bad JSON: offset 0: duplicate key "label"`},
		{"too few examples", []string{"--data", p("few.jsonl"), "--max-hallucination", "0.1"}, exitFail, "needs at least 22"},
		{"scores at the float64 limit", []string{"--data", p("huge.jsonl"), "--max-hallucination", "0.1"}, exitFail,
			"huge.jsonl: line 1: request.chunks[0].scores.bm25: must be a finite number at most 1e300 in magnitude"},
		{"an impossible bound", []string{"--data", p("good.jsonl"), "--max-error", "0.001"}, exitFail, "no guarantee"},
		{"both bounds", []string{"--data", p("good.jsonl"), "--max-error", "0.1", "--max-hallucination", "0.1"}, exitUsage, "not both"},
		{"no bound", []string{"--data", p("good.jsonl")}, exitUsage, "give the bound"},
		{"a bound of 1.5", []string{"--data", p("good.jsonl"), "--max-error", "1.5"}, exitUsage, "must be in (0,1)"},
		{"confidence 1", []string{"--data", p("good.jsonl"), "--max-error", "0.1", "--confidence", "1"}, exitUsage, "--confidence must be in (0,1)"},
		{"a base without answerability", []string{"--data", p("good.jsonl"), "--max-error", "0.1", "--base", "rag-confidence"}, exitFail, "signals.answerability"},
		{"an unknown base", []string{"--data", p("good.jsonl"), "--max-error", "0.1", "--base", p("nope.json")}, exitUsage, "--base:"},
		{"a base that is no policy", []string{"--data", p("good.jsonl"), "--max-error", "0.1", "--base", p("rag.json")}, exitFail, "--base:"},
		{"no --data", []string{"--max-error", "0.1"}, exitUsage, "usage:"},
	} {
		args := append([]string{"calibrate", "--out", p("policy.json"), "--report", p("report.md")}, c.args...)
		code, _, errOut := cli(t, "", args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d saying %q", c.name, code, errOut, c.code, c.want)
		}
		if fileExists(p("policy.json")) || fileExists(p("report.md")) {
			t.Fatalf("%s: wrote a policy or report", c.name)
		}
	}
	// A signed bundle is not a base: calibrate the policy, then sign.
	cli(t, "", "keygen", "--out", p("k"))
	_, b, _ := cli(t, "", "sign", "--key", p("k.key"), p("rag.json"))
	os.WriteFile(p("bundle.json"), []byte(b), 0o644)
	if code, _, errOut := cli(t, "", "calibrate", "--data", p("good.jsonl"), "--max-error", "0.1", "--base", p("bundle.json"), "--out", p("policy.json")); code != exitUsage || !strings.Contains(errOut, "signed bundle") {
		t.Errorf("a bundle as --base: exit %d, %s", code, errOut)
	}
}

// writeDecisionLogs turns a calibration examples file into the decision
// and feedback logs serve would have written for it: each example asked
// `asked` times (a popular question), each time decided and labeled alike;
// vary rewrites the request of every repeat after the first.
func writeDecisionLogs(t *testing.T, examples, decisions, feedback string, asked int, vary func(req string, n int) string) {
	t.Helper()
	raw, err := os.ReadFile(examples)
	if err != nil {
		t.Fatal(err)
	}
	var dec, fb []byte
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var ex struct {
			Request json.RawMessage `json:"request"`
			Label   int             `json:"label"`
		}
		if err := json.Unmarshal([]byte(line), &ex); err != nil {
			t.Fatal(err)
		}
		var req bytes.Buffer
		json.Compact(&req, ex.Request)
		for r := 0; r < asked; r++ {
			n++
			id := fmt.Sprintf("decision-%d", n)
			input := req.String()
			if r > 0 && vary != nil {
				input = vary(input, r)
			}
			at = at.Add(time.Second)
			dec = decisionlog.AppendDecision(dec, &decisionlog.Decision{ID: id, Timestamp: at, Path: "/v1/gate", Action: "refuse", Input: json.RawMessage(input)})
			answer := ex.Label == 1
			fb = decisionlog.AppendFeedback(fb, &decisionlog.Feedback{DecisionID: id, Timestamp: at, AnswerInSources: &answer})
		}
	}
	if os.WriteFile(decisions, dec, 0o644) != nil || os.WriteFile(feedback, fb, 0o644) != nil {
		t.Fatal("cannot write the logs")
	}
}

// Repeats of one question in the decision logs count once: a question
// asked ten times, decided and labeled alike each time, certifies exactly
// what it does asked once, and asked ten times with its wording's case and
// spacing changed, the bound still counts questions, not decisions.
func TestCalibrateDecisionLogRepeats(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	writeExamples(t, p("examples.jsonl"), 300, 3)
	type bound struct {
		N        int     `json:"n"`
		K        int     `json:"k"`
		PValue   float64 `json:"p_value"`
		Examples int     `json:"examples"`
	}
	run := func(name string, asked int, vary func(string, int) string) (string, bound) {
		writeDecisionLogs(t, p("examples.jsonl"), p(name+".decisions"), p(name+".feedback"), asked, vary)
		code, _, errOut := cli(t, "", "calibrate", "--decisions", p(name+".decisions"), "--feedback", p(name+".feedback"),
			"--max-hallucination", "0.2", "--version", "1", "--out", p(name+".json"), "--report", p(name+".report.json"))
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		pol, _ := os.ReadFile(p(name + ".json"))
		var rep struct{ Bound bound }
		raw, _ := os.ReadFile(p(name + ".report.json"))
		if err := json.Unmarshal(raw, &rep); err != nil {
			t.Fatal(err)
		}
		return string(pol), rep.Bound
	}
	once, b1 := run("once", 1, nil)
	ten, b10 := run("ten", 10, nil)
	if ten != once || b10 != b1 {
		t.Errorf("asked ten times: bound %+v, want exactly what asked once gives, %+v (and the same policy)", b10, b1)
	}
	// Rewordings by case and spacing, chunks in another order: other
	// requests, the same question.
	_, bv := run("reworded", 10, func(req string, n int) string {
		var r map[string]any
		json.Unmarshal([]byte(req), &r)
		q := r["query"].(string)
		if n%2 == 1 {
			q = strings.ToUpper(q)
		}
		r["query"] = strings.ReplaceAll(q, " ", strings.Repeat(" ", 1+n%3))
		cs := r["chunks"].([]any)
		cs[0], cs[n%len(cs)] = cs[n%len(cs)], cs[0]
		b, _ := json.Marshal(r)
		return string(b)
	})
	if bv.N > 150 || bv.Examples < 5*bv.N {
		t.Errorf("150 questions labeled 0, each asked ten ways: the bound counts %d of %d examples, want at most one per question", bv.N, bv.Examples)
	}
	// The joined file carries the question as the group: calibrating from
	// it counts alike.
	if code, _, errOut := cli(t, "", "decisions", "join", "--decisions", p("reworded.decisions"), "--feedback", p("reworded.feedback"), "--out", p("joined.jsonl")); code != exitOK {
		t.Fatal(errOut)
	}
	if code, _, errOut := cli(t, "", "calibrate", "--data", p("joined.jsonl"), "--max-hallucination", "0.2", "--version", "1",
		"--out", p("joined.json"), "--report", p("joined.report.json")); code != exitOK {
		t.Fatal(errOut)
	}
	var rep struct{ Bound bound }
	raw, _ := os.ReadFile(p("joined.report.json"))
	if json.Unmarshal(raw, &rep); rep.Bound != bv {
		t.Errorf("from the joined file: bound %+v, want %+v as from the logs", rep.Bound, bv)
	}
}
