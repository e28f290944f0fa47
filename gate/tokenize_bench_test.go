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

// BenchmarkTokenize is the tokenizer alone, for its bytes per second: the
// byte loop that tokenizes queries (chunk texts go through scanText,
// BenchmarkScanText); BenchmarkTokenizeRef is the FNV-1a tokenizer of
// before the block hash, for the ratio.
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

// BenchmarkScanText is prepare's per-chunk scan over 30 KB of prose against
// a five-term query; BenchmarkScanTextRef is the tokenize-then-look-up loop
// it replaced, for the ratio.
func BenchmarkScanText(b *testing.B) { benchScan(b, false) }

func BenchmarkScanTextRef(b *testing.B) { benchScan(b, true) }

func benchScan(b *testing.B, ref bool) {
	e, err := NewEngine(nil)
	if err != nil {
		b.Fatal(err)
	}
	e.analyseQuery("how do plants turn light energy into sugar")
	s := benchText()
	q := &e.q
	var toks []token
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var hits termHits
		if ref {
			q.scanTextRef(s, i+1, &hits, &toks)
		} else {
			q.scanText(s, i+1, &hits)
		}
	}
}
