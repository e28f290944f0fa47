package gate

import (
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/internal/benchdoc"
)

// benchRequest is the codec benchmarks' shared request (internal/benchdoc).
var benchRequest = benchdoc.Request

func BenchmarkDecodeRequest20(b *testing.B) {
	data := benchRequest(20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ { // not b.Loop: TinyGo lacks it
		if _, err := DecodeRequest(data, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendDecision(b *testing.B) {
	d := fullDecision()
	for i := 0; i < 18; i++ {
		d.Chunks = append(d.Chunks, d.Chunks[0])
	}
	buf := make([]byte, 0, 8192)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ { // not b.Loop: TinyGo lacks it
		buf = AppendDecision(buf[:0], d)
	}
}

func TestBenchRequestIsValid(t *testing.T) {
	data := benchRequest(20)
	if len(data) < 20000 || len(data) > 30000 {
		t.Errorf("bench request is %d bytes, want ~25 KB", len(data))
	}
	req, err := DecodeRequest(data, nil)
	if err != nil || len(req.Chunks) != 20 || !strings.Contains(req.Chunks[3].Text, "(\"limiting factors\")") || !strings.Contains(req.Chunks[3].Text, "oxygen.\nThe") {
		t.Fatalf("bench request: %v", err)
	}
}

// The parse alone, in this package's binary: DecodeRequest20 minus this is
// the cost of the field readers and checks.
func BenchmarkDecodeRequest20ParseOnly(b *testing.B) {
	data := benchRequest(20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := jsonx.Parse(data, 32); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeRequest20InPlace(b *testing.B) {
	data := benchRequest(20)
	buf := make([]byte, len(data))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		copy(buf, data) // a guest's fresh input buffer
		if _, err := DecodeRequestInPlace(buf, nil); err != nil {
			b.Fatal(err)
		}
	}
}
