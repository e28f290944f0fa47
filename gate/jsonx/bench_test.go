package jsonx

import (
	"strconv"
	"testing"

	"github.com/ctxgate/ctxgate/internal/benchdoc"
)

// benchDoc is the codec benchmarks' shared request (internal/benchdoc).
var benchDoc = benchdoc.Request

func BenchmarkParse(b *testing.B) {
	data := benchDoc(20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ { // not b.Loop: TinyGo lacks it
		if _, err := Parse(data, 32); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendCanonical(b *testing.B) {
	v, err := Parse(benchDoc(20), 32)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 32<<10)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ { // not b.Loop: TinyGo lacks it
		buf = AppendCanonical(buf[:0], &v)
	}
}

// encoding/json into an untyped tree, for a ratio only (not a product path).
func BenchmarkParseStdlibBaseline(b *testing.B) {
	data := benchDoc(20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ { // not b.Loop: TinyGo lacks it
		var v any
		if err := jsonUnmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseInPlace(b *testing.B) {
	data := benchDoc(20)
	buf := make([]byte, len(data))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		copy(buf, data) // the guest's fresh input buffer
		if _, err := ParseInPlace(buf, 32); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendFloat(b *testing.B) {
	xs := []float64{0.823456789, 0.5, 1, 0.016393, 3.25, 0.000001, 12.5}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendFloat(buf[:0], xs[i%len(xs)])
	}
}

// strconv's formatter, the reference AppendFloat's fast path reproduces.
func BenchmarkAppendFloatStrconv(b *testing.B) {
	xs := []float64{0.823456789, 0.5, 1, 0.016393, 3.25, 0.000001, 12.5}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = strconv.AppendFloat(buf[:0], Round6(xs[i%len(xs)]), 'f', -1, 64)
	}
}
