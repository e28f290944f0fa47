package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/host/gaps"
	"github.com/ctxgate/ctxgate/policies"
)

// A question the evidence does not touch: the default policy refuses it and
// records a refusal_hard gap event.
const offTopicRequest = `{"query":"what is the boiling point of mercury","chunks":[` +
	`{"id":"c1","doc_id":"ops","text":"To rotate the signing key, generate a new key pair and publish it before retiring the old one.","scores":{"vector":0.31,"bm25":0.4}}]}`

// --gap-log appends exactly the gap events, in the format ctxgate gaps reads,
// in every mode; a decision without a gap appends nothing.
func TestEvalGapLog(t *testing.T) {
	noGap, err := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", "default", "inject.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "gaps.jsonl")
			args := append([]string{"eval", "--gap-log", log}, modeFlags(t, mode)...)
			if code, out, errs := cli(t, string(noGap), args...); code != exitOK || !strings.Contains(out, `"gap_event":null`) {
				t.Fatalf("confident request: exit %d, %s %s", code, out, errs)
			}
			if _, err := os.Stat(log); !os.IsNotExist(err) {
				t.Fatalf("a decision without a gap event created the log (err %v)", err)
			}
			for i := 0; i < 2; i++ {
				code, out, errs := cli(t, offTopicRequest, args...)
				if code != exitOK || !strings.Contains(out, `"action":"refuse"`) {
					t.Fatalf("off-topic request: exit %d, %s %s", code, out, errs)
				}
			}
			data, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			events, _, err := gaps.ReadEvents(bytes.NewReader(data), gaps.ReadOptions{Strict: true})
			if err != nil || len(events) != 2 {
				t.Fatalf("gap log: %d events, err %v\n%s", len(events), err, data)
			}
			for _, ev := range events {
				if ev.Kind != "refusal_hard" || ev.Query != "what is the boiling point of mercury" ||
					!ev.HasTime || ev.DecisionID == "" || ev.Policy.Name != "default" {
					t.Fatalf("event %+v", ev)
				}
			}
			if events[0].DecisionID == events[1].DecisionID {
				t.Fatal("two decisions share one decision_id")
			}
		})
	}
}

// --trust: a bundle signed by a trusted key is used; the plain policy and a
// bundle signed by another key are refused, natively and inside the module.
func TestEvalTrust(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, prefix := range []string{"a", "b"} {
		if code, _, errs := ctl(t, "keygen", "--out", p(prefix)); code != exitOK {
			t.Fatalf("keygen: %s", errs)
		}
	}
	plain, _ := policies.Get("wikigr")
	os.WriteFile(p("policy.json"), plain, 0o644)
	code, signed, errs := ctl(t, "sign", "--key", p("a.key"), p("policy.json"))
	if code != exitOK {
		t.Fatalf("sign: %s", errs)
	}
	os.WriteFile(p("bundle.json"), []byte(signed), 0o644)

	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			run := func(policy, trust string) (int, string, string) {
				args := append([]string{"eval", "--policy", policy, "--trust", trust}, modeFlags(t, mode)...)
				return cli(t, goodRequest, args...)
			}
			if code, out, errs := run(p("bundle.json"), p("a.pub")); code != exitOK || !strings.Contains(out, `"name":"wikigr"`) {
				t.Fatalf("signed bundle, trusted key: exit %d %s %s", code, out, errs)
			}
			if code, out, errs := run(p("policy.json"), p("a.pub")); code != exitFail || out != "" || !strings.Contains(errs, "bad_policy: policy: trust_keys are configured, so the policy must be a signed bundle") {
				t.Fatalf("unsigned policy: exit %d %q %q", code, out, errs)
			}
			if code, out, errs := run(p("bundle.json"), p("b.pub")); code != exitFail || out != "" || !oneLine(errs) {
				t.Fatalf("bundle signed by an untrusted key: exit %d %q %q", code, out, errs)
			}
		})
	}
}

// --receipt: eval signs a receipt over the exact request and decision bytes,
// which verify-receipt accepts for those bytes and refuses for others.
func TestEvalReceipt(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if code, _, errs := ctl(t, "keygen", "--out", p("k")); code != exitOK {
		t.Fatalf("keygen: %s", errs)
	}
	os.WriteFile(p("request.json"), []byte(goodRequest), 0o644)
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			receipt := p(mode + ".receipt.json")
			args := append([]string{"eval", "--receipt-key", p("k.key"), "--receipt", receipt}, modeFlags(t, mode)...)
			code, out, errs := cli(t, "", append(args, p("request.json"))...)
			if code != exitOK {
				t.Fatalf("eval: exit %d %s", code, errs)
			}
			// The receipt covers the bytes eval wrote, newline included.
			decision := p(mode + ".decision.json")
			os.WriteFile(decision, []byte(out), 0o644)
			if code, vout, verrs := ctl(t, "verify-receipt", "--trust", p("k.pub"), "--request", p("request.json"),
				"--decision", decision, receipt); code != exitOK || !strings.Contains(vout, `"request_checked":true,"decision_checked":true`) {
				t.Fatalf("verify-receipt: exit %d %s %s", code, vout, verrs)
			}
			os.WriteFile(p("other.json"), []byte(offTopicRequest), 0o644)
			if code, _, verrs := ctl(t, "verify-receipt", "--trust", p("k.pub"), "--request", p("other.json"), receipt); code != exitFail ||
				!strings.Contains(verrs, "does not match") {
				t.Fatalf("receipt accepted for another request: exit %d %s", code, verrs)
			}
		})
	}
	if code, _, errs := cli(t, goodRequest, "eval", "--native", "--receipt", p("r.json")); code != exitUsage || !oneLine(errs) {
		t.Fatalf("--receipt without --receipt-key: exit %d %q", code, errs)
	}
}

// --vector-metric is the metric of requests that state none, in every
// mode: squared l2 distances decide as their cosines; an unknown metric is
// a usage error.
func TestEvalVectorMetric(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "requests", "default")
	restated, err := os.ReadFile(filepath.Join(dir, "inject.l2_squared.json"))
	if err != nil {
		t.Fatal(err)
	}
	bare := strings.Replace(string(restated), `"vector_metric": "l2_squared",`, "", 1)
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			code, want, errs := cli(t, string(restated), append([]string{"eval"}, modeFlags(t, mode)...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			code, got, errs := cli(t, bare, append([]string{"eval", "--vector-metric", "l2_squared", "--rerank-scale", "logit"}, modeFlags(t, mode)...)...)
			if code != exitOK || got != want {
				t.Errorf("--vector-metric l2_squared: exit %d %s\n%s\nwant %s", code, errs, got, want)
			}
		})
	}
	for _, args := range [][]string{{"--vector-metric", "ip"}, {"--rerank-scale", "odds"}} {
		if code, _, errs := cli(t, "{}", append([]string{"eval", "--native"}, args...)...); code != exitUsage || !strings.Contains(errs, args[0]) {
			t.Errorf("%v: exit %d, %s", args, code, errs)
		}
	}
}
