package jsonx

import (
	"strconv"
	"strings"
	"testing"
)

// benchDoc is the same shape as gate's 20-chunk benchmark request (~25 KB).
func benchDoc(n int) []byte {
	const prose = "Photosynthesis converts light energy into chemical energy stored in glucose. " +
		"In the light-dependent reactions, chlorophyll absorbs photons and water is split, releasing oxygen.\n" +
		"The Calvin cycle then fixes carbon dioxide into three-carbon sugars using ATP and NADPH. " +
		"Rates depend on light intensity, CO2 concentration and temperature (\"limiting factors\"). "
	var b strings.Builder
	b.WriteString(`{"query":"How do plants turn sunlight into food?","now":"2024-05-01T12:00:00Z","chunks":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		s := strconv.Itoa(i)
		b.WriteString(`{"id":"chunk-` + s + `","doc_id":"doc-` + strconv.Itoa(i/3) + `","title":"Photosynthesis part ` + s + `","text":"`)
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(strings.Repeat(prose, 3), `"`, `\"`), "\n", `\n`))
		b.WriteString(`","scores":{"vector":0.` + strconv.Itoa(90-i) + `,"bm25":` + strconv.Itoa(20-i/2) + `.5,"rrf":0.0163},`)
		b.WriteString(`"updated_at":"2023-0` + strconv.Itoa(1+i%9) + `-15T08:30:00Z","trust":0.9,"metadata":{"source":"wiki","page":` + s + `}}`)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

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
