package gate

import (
	"strings"
	"testing"
)

// benchText is about 30 KB of English prose: the text of a 20-chunk request.
func benchText() string {
	var sb strings.Builder
	for sb.Len() < 30_000 {
		for _, p := range benchProse {
			sb.WriteString(p)
			sb.WriteString("\n\n")
		}
	}
	return sb.String()
}

// BenchmarkTokenize is the tokenizer alone, for its bytes per second;
// BenchmarkTokenizeRef is the byte-at-a-time FNV-1a tokenizer it replaced,
// for the ratio.
func BenchmarkTokenize(b *testing.B) {
	s := benchText()
	toks, _ := tokenize(s, nil, nil, nil)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		toks, _ = tokenize(s, toks[:0], nil, nil)
	}
}

func BenchmarkTokenizeRef(b *testing.B) {
	s := benchText()
	toks := tokenizeRef(s, nil, nil, nil)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		toks = tokenizeRef(s, toks[:0], nil, nil)
	}
}
