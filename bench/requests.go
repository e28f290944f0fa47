// Package bench measures the gate's speed (issue 10): per-decision latency
// natively and through both Wasm builds, cold start, memory per instance and
// throughput. bench/cmd/perf runs it all in one process and writes
// docs/performance.md; this package holds the pieces so they can be tested.
package bench

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Workload is a set of requests of one shape, cycled through while timing so
// a figure is over real variety, not one lucky request.
type Workload struct {
	Name     string // e.g. "20 passages"
	Chunks   int
	Requests [][]byte
}

// MeanBytes is the average request size.
func (w Workload) MeanBytes() int {
	if len(w.Requests) == 0 {
		return 0
	}
	total := 0
	for _, r := range w.Requests {
		total += len(r)
	}
	return total / len(w.Requests)
}

// hit is one retrieved passage as the rank_llm files store it.
type hit struct {
	Content string  `json:"content"`
	DocID   string  `json:"docid"`
	Score   float64 `json:"score"`
}

type run struct {
	Query string `json:"query"`
	Hits  []hit  `json:"hits"`
}

// ErrNoData means the TREC DL19 files are not beside the repository.
var ErrNoData = errors.New("bench: TREC DL19 data not found")

// DL19 holds, per query, the dense retriever's ranked hits (OpenAI ada-002
// cosine similarity) and each passage's BM25 score where BM25 also
// retrieved it: the vector + bm25 pair a hybrid retriever hands the gate.
type DL19 struct {
	Queries []string
	Hits    [][]hit
	BM25    []map[string]float64
}

// LoadDL19 reads ../shared/data/trec-dl19 relative to the repository root.
func LoadDL19(dataDir string) (*DL19, error) {
	dir := filepath.Join(dataDir, "trec-dl19", "retrieve_results")
	dense, err := readRuns(filepath.Join(dir, "OPEN_AI_ADA2.dl19.json.gz"))
	if err != nil {
		return nil, err
	}
	sparse, err := readRuns(filepath.Join(dir, "BM25.dl19.json.gz"))
	if err != nil {
		return nil, err
	}
	bm25 := map[string]map[string]float64{}
	for _, r := range sparse {
		m := map[string]float64{}
		for _, h := range r.Hits {
			m[h.DocID] = h.Score
		}
		bm25[r.Query] = m
	}
	d := &DL19{}
	for _, r := range dense {
		d.Queries = append(d.Queries, r.Query)
		d.Hits = append(d.Hits, r.Hits)
		d.BM25 = append(d.BM25, bm25[r.Query])
	}
	if len(d.Queries) == 0 {
		return nil, errors.New("bench: no queries in " + dir)
	}
	return d, nil
}

func readRuns(path string) ([]run, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, ErrNoData
		}
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var runs []run
	if err := json.NewDecoder(z).Decode(&runs); err != nil {
		return nil, errors.New("bench: " + path + ": " + err.Error())
	}
	return runs, nil
}

// Workload builds one request per query with n chunks, in the dense
// retriever's order. perChunk > 1 joins that many passages into one chunk,
// for chunk sizes like a RAG splitter's (~1.5 KB) rather than MS MARCO's
// ~350-byte passages: chunk i holds passages i, i+n, i+2n, ... (wrapping
// around the query's 100 hits when n*perChunk is more) and passage i's
// scores.
func (d *DL19) Workload(name string, n, perChunk int) Workload {
	w := Workload{Name: name, Chunks: n}
	if perChunk < 1 {
		perChunk = 1
	}
	for q, query := range d.Queries {
		hits := d.Hits[q]
		if len(hits) < n {
			continue
		}
		var b strings.Builder
		b.WriteString(`{"query":`)
		writeString(&b, query)
		b.WriteString(`,"chunks":[`)
		for i := 0; i < n; i++ {
			first := hits[i]
			texts := make([]string, perChunk)
			for j := range texts {
				texts[j] = hits[(i+j*n)%len(hits)].Content
			}
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"id":`)
			writeString(&b, first.DocID)
			b.WriteString(`,"doc_id":`)
			writeString(&b, first.DocID)
			b.WriteString(`,"text":`)
			writeString(&b, strings.Join(texts, "\n\n"))
			b.WriteString(`,"scores":{"vector":` + strconv.FormatFloat(first.Score, 'f', -1, 64))
			if s, ok := d.BM25[q][first.DocID]; ok {
				b.WriteString(`,"bm25":` + strconv.FormatFloat(s, 'f', -1, 64))
			}
			b.WriteString(`}}`)
		}
		b.WriteString(`]}`)
		w.Requests = append(w.Requests, []byte(b.String()))
	}
	return w
}

func writeString(b *strings.Builder, s string) {
	j, _ := json.Marshal(s) // a string always marshals
	b.Write(j)
}

// Synthetic builds requests of the same shape from fixed prose, for a
// checkout without the data directory. Figures from it are marked as such.
func Synthetic(name string, n, perChunk int) Workload {
	const prose = "Photosynthesis converts light energy into chemical energy stored in glucose. " +
		"In the light-dependent reactions, chlorophyll absorbs photons and water is split, releasing oxygen. " +
		"The Calvin cycle then fixes carbon dioxide into three-carbon sugars using ATP and NADPH. "
	queries := []string{"how do plants turn sunlight into food", "what does the calvin cycle produce",
		"why is chlorophyll green", "where does the oxygen from photosynthesis come from"}
	d := &DL19{}
	for q, query := range queries {
		var hits []hit
		for i := 0; i < 100; i++ {
			hits = append(hits, hit{Content: prose[(i*7+q)%40:], DocID: "doc-" + strconv.Itoa(i), Score: 0.9 - float64(i)*0.004})
		}
		d.Queries = append(d.Queries, query)
		d.Hits = append(d.Hits, hits)
		d.BM25 = append(d.BM25, map[string]float64{"doc-0": 12.5, "doc-2": 9.1, "doc-5": 7.3})
	}
	return d.Workload(name, n, perChunk)
}
