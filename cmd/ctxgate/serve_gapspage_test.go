package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Against a real `ctxgate serve` with a feedback token: /gaps takes the
// token too (it shows users' questions), and a page is built once per
// state of the gap log, however often it is read.
func TestServeGapsPageTokenAndCache(t *testing.T) {
	dir := t.TempDir()
	token := "gaps-and-feedback-0123456789"
	os.WriteFile(filepath.Join(dir, "tokens"), []byte(token+"\n"), 0o600)
	gapLog := filepath.Join(dir, "gaps.jsonl")
	base, _ := serveProcess(t, append([]string{"--gap-log", gapLog, "--feedback-token-file", filepath.Join(dir, "tokens"),
		"--reload-poll", "0", "--access-log", "off"}, wasmFlags(t, "tinygo")...)...)
	auth := []string{"Authorization", "Bearer " + token}
	wantAPIError(t, "/gaps without the token", send(t, http.MethodGet, base+"/gaps", nil), 401, "unauthorized", "")
	wantAPIError(t, "/gaps with a wrong token", send(t, http.MethodGet, base+"/gaps", nil, "Authorization", "Bearer wrong-token-0123456789"), 401, "unauthorized", "")

	req, err := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", "default", "refuse_off_topic.json"))
	if err != nil {
		t.Fatal(err)
	}
	refuse := func() {
		if r := send(t, http.MethodPost, base+"/v1/gate", req); r.header.Get("X-Ctxgate-Action") != "refuse" {
			t.Fatalf("gate: %d %s", r.status, r.body)
		}
	}
	builds := func() string {
		for _, l := range strings.Split(string(send(t, http.MethodGet, base+"/metrics", nil).body), "\n") {
			if strings.HasPrefix(l, "ctxgate_gaps_page_builds_total ") {
				return l
			}
		}
		return "no ctxgate_gaps_page_builds_total"
	}
	refuse()
	for i := 0; i < 10; i++ {
		if r := send(t, http.MethodGet, base+"/gaps", nil, auth...); r.status != 200 || !strings.Contains(string(r.body), "1 event") {
			t.Fatalf("/gaps with the token: %d", r.status)
		}
	}
	if b := builds(); b != "ctxgate_gaps_page_builds_total 1" {
		t.Errorf("ten reads of one log: %q, want one build", b)
	}
	refuse()
	if r := send(t, http.MethodGet, base+"/gaps", nil, auth...); r.status != 200 || !strings.Contains(string(r.body), "2 events") {
		t.Errorf("after a new event: %d, the page does not count it", r.status)
	}
	if b := builds(); b != "ctxgate_gaps_page_builds_total 2" {
		t.Errorf("after a new event: %q, want a second build", b)
	}
}
