package filter

import "testing"

func TestPathMatches(t *testing.T) {
	tests := []struct {
		path, prefix string
		want         bool
	}{
		{"/v1/chat/completions", "/v1/chat/completions", true},
		{"/v1/chat/completions?x=1", "/v1/chat/completions", true},
		{"/v1/chat/completions/", "/v1/chat/completions", true},
		{"/v1/chat/completionsX", "/v1/chat/completions", false},
		{"/v1/embeddings", "/v1/chat/completions", false},
		{"/openai/v1/chat/completions", "/openai/", true},
	}
	for _, tt := range tests {
		if got := pathMatches(tt.path, tt.prefix); got != tt.want {
			t.Errorf("pathMatches(%q, %q) = %v", tt.path, tt.prefix, got)
		}
	}
}
