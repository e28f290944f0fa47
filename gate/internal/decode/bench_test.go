package decode

import (
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

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
