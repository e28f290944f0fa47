package gate

import (
	"strings"
	"testing"
)

// BenchmarkTokenize is the tokenizer alone over about 30 KB of English prose
// (the size of a 20-chunk request's text), for its bytes per second.
func BenchmarkTokenize(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 30_000 {
		for _, p := range benchProse {
			sb.WriteString(p)
			sb.WriteString("\n\n")
		}
	}
	s := sb.String()
	toks, _ := tokenize(s, nil, nil, nil)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		toks, _ = tokenize(s, toks[:0], nil, nil)
	}
}
