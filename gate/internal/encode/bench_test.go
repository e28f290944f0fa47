package encode

import "testing"

func BenchmarkAppendDecision(b *testing.B) {
	d := fullDecision()
	for i := 0; i < 18; i++ {
		d.Chunks = append(d.Chunks, d.Chunks[0])
	}
	buf := make([]byte, 0, 8192)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ { // not b.Loop: TinyGo lacks it
		buf = AppendDecision(buf[:0], d, nil)
	}
}
