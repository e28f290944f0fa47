// Package benchdoc builds the synthetic request the codec benchmarks and
// tests share, so the parser's and the decoder's figures are for the same
// document.
package benchdoc

import (
	"strconv"
	"strings"
)

// Request is a realistic gate request: n chunks of ~1.2 KB prose each (20
// chunks ≈ 25 KB), with ids, titles, scores, dates, escapes and free-form
// metadata, the shape a hybrid retriever sends.
func Request(n int) []byte {
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
