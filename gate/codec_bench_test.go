package gate

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// benchRequest builds a realistic request: n chunks of ~1.2 KB prose each
// (20 chunks ≈ 25 KB), with ids, titles, scores, dates and escapes, the
// shape a hybrid retriever sends.
func benchRequest(n int) []byte {
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
