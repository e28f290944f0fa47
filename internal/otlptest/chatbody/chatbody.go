// Package chatbody makes the chat completions request the tracing tests
// and benchmarks send: the golden inject request's question and chunks,
// as an application sends them to the gateway. It links nothing of the
// Collector (the benchmarks must not: see bench).
package chatbody

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// Model is the model the request asks for.
const Model = "gpt-4o-mini"

// Completion is the upstream's answer to it: one choice, a citation of
// S1, the model's dated name and the token usage.
const Completion = `{"id":"chatcmpl-otlp","object":"chat.completion","created":1767225600,"model":"gpt-4o-mini-2024-07-18",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"Open Settings, then Security [S1]."},"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":812,"completion_tokens":17,"total_tokens":829}}`

// Inject reads testdata/requests/default/inject.json under root (the
// repository) and returns it as a chat body: the question as the user
// message, the chunks as "documents", max_tokens 200.
func Inject(root string) ([]byte, error) {
	var g struct {
		Query  string            `json:"query"`
		Chunks []json.RawMessage `json:"chunks"`
	}
	b, err := os.ReadFile(filepath.Join(root, "testdata", "requests", "default", "inject.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{
		"model":      Model,
		"max_tokens": 200,
		"messages":   []map[string]string{{"role": "user", "content": g.Query}},
		"documents":  g.Chunks,
	})
}
