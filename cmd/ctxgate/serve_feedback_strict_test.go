package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// Feedback with a repeated member is bad JSON, as a gate request is:
// `"rating":"up","rating":"down"` was recorded as down, while another
// reader of the same bytes could take it as up. Against a real `ctxgate
// serve`, each is refused with 400 bad_json and nothing is written.
func TestServeFeedbackDuplicateKeys(t *testing.T) {
	dir := t.TempDir()
	fbLog, gapLog := filepath.Join(dir, "feedback.jsonl"), filepath.Join(dir, "gaps.jsonl")
	base, _ := serveProcess(t, append([]string{"--feedback-log", fbLog, "--gap-log", gapLog, "--reload-poll", "0", "--access-log", "off"}, wasmFlags(t, "tinygo")...)...)
	req, err := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", "default", "inject.json"))
	if err != nil {
		t.Fatal(err)
	}
	id := send(t, http.MethodPost, base+"/v1/gate", req).header.Get("X-Ctxgate-Decision-Id")
	for name, body := range map[string]string{
		"rating twice":            `{"decision_id":"` + id + `","rating":"up","rating":"down"}`,
		"verdict twice":           `{"decision_id":"` + id + `","answer_in_sources":true,"answer_in_sources":false}`,
		"decision id twice":       `{"decision_id":"nope","decision_id":"` + id + `","rating":"down"}`,
		"comment twice":           `{"decision_id":"` + id + `","rating":"down","comment":"a","comment":"b"}`,
		"a lone surrogate":        `{"decision_id":"` + id + `","rating":"down","comment":"\ud800"}`,
		"escaped key twice (\\u)": `{"decision_id":"` + id + `","rating":"up","r\u0061ting":"down"}`,
	} {
		wantAPIError(t, name, send(t, http.MethodPost, base+"/v1/feedback", []byte(body)), 400, "bad_json", "")
	}
	// Accepted feedback still is.
	if r := send(t, http.MethodPost, base+"/v1/feedback", []byte(`{"decision_id":"`+id+`","rating":"up"}`)); r.status != 200 {
		t.Fatalf("good feedback: %d %s", r.status, r.body)
	}
	if b := waitLines(t, fbLog, 1); bytes.Count(b, []byte("\n")) != 1 {
		t.Fatalf("feedback log: want only the good line:\n%s", b)
	}
	if b, _ := os.ReadFile(gapLog); len(b) != 0 {
		t.Fatalf("refused feedback logged a gap event:\n%s", b)
	}
}
