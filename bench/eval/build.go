package eval

import "sort"

// Request is the part of a gate request the evaluation builds: the harness
// does not import the core, so it keeps working (and measuring baselines)
// while gate/ is being changed. Package quality turns it into a
// gate.Request.
type Request struct {
	Query  string
	Chunks []Chunk
	// VectorMetric is the request's vector_metric ("" for the default,
	// cosine similarity).
	VectorMetric string
}

// Chunk is one retrieved passage of a Request. A score is sent only when
// its Has flag is set.
type Chunk struct {
	ID, DocID, Title, Text        string
	Vector, BM25, Sparse          float64
	HasVector, HasBM25, HasSparse bool
}

// Item is one labeled gate request.
type Item struct {
	Set string // "dl19", "dl21", "clapnq" or "nomiracl-<lang>": the split's key
	// Family names the retriever pair of an answer-removed item
	// ("dl19-tasb", Pair.Name); "" elsewhere, where the set names it.
	Family     string
	ID         string // query id
	Tune       bool   // in the tuning half (else held out)
	Req        *Request
	Answerable bool   // query label
	ChunkRel   []bool // passage label per chunk of Req.Chunks
	Grades     []int  // DL19 graded relevance per chunk (0 when unjudged)
}

// RRFK is the RRF constant (Cormack et al.), with 1-based ranks.
const RRFK = 60

// RelGrade is the DL19 grade from which a passage counts as relevant.
const RelGrade = 2

// HybridRank is one passage of the RRF fusion of two retrievers' lists.
type HybridRank struct {
	DocID                      string
	RRF                        float64
	BM25, Vector, Sparse       float64
	HasBM25, HasVec, HasSparse bool
}

// Hybrid fuses BM25 and the set's default second retriever's top-100 lists
// of one query by reciprocal rank (1/(60+rank), rank 1-based). A passage
// absent from one list contributes nothing from it, and its score for that
// retriever stays absent: it ranked below that retriever's 100th hit, and a
// made-up number would be a lie the gate cannot tell from a real one. Ties
// break by docid, so the order is deterministic.
func (d *TREC) Hybrid(qid string) []HybridRank { return d.HybridWithout(qid, nil) }

// SecondRetriever is the retriever fused with BM25 in a set's default hybrid
// list: ada-002 (dense, scores.vector) for DL19, SPLADE++ (learned sparse,
// scores.sparse) for DL21.
func (d *TREC) SecondRetriever() string {
	if d.Set == "dl21" {
		return Splade
	}
	return Ada2
}

// HybridWithout is HybridPairWithout with the set's default second retriever.
func (d *TREC) HybridWithout(qid string, drop map[string]bool) []HybridRank {
	return d.HybridPairWithout(qid, d.SecondRetriever(), drop)
}

// HybridPairWithout fuses BM25 with second over the runs with the passages
// in drop removed from every run, as if they had never been indexed: the
// remaining hits move up, so their ranks (and RRF) are counted among what is
// left, while their scores stay the retrievers' raw scores. A dense second
// retriever's score goes to Vector (ada-002's cosine, TAS-B's dot product:
// Pair says which), SPLADE++'s to Sparse.
func (d *TREC) HybridPairWithout(qid, second string, drop map[string]bool) []HybridRank {
	idx := map[string]int{}
	var out []HybridRank
	add := func(run *Run, field string) {
		if run == nil {
			return
		}
		rank := 0
		for _, h := range run.Hits {
			if drop[h.DocID] {
				continue
			}
			rank++
			i, ok := idx[h.DocID]
			if !ok {
				i = len(out)
				idx[h.DocID] = i
				out = append(out, HybridRank{DocID: h.DocID})
			}
			out[i].RRF += 1 / float64(RRFK+rank)
			switch field {
			case "vector":
				out[i].Vector, out[i].HasVec = h.Score, true
			case "sparse":
				out[i].Sparse, out[i].HasSparse = h.Score, true
			default:
				out[i].BM25, out[i].HasBM25 = h.Score, true
			}
		}
	}
	add(d.Runs[BM25][qid], "bm25")
	add(d.Runs[second][qid], secondField(second))
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].RRF != out[j].RRF {
			return out[i].RRF > out[j].RRF
		}
		return out[i].DocID < out[j].DocID
	})
	return out
}

// secondField is the request score a second retriever's score is sent as.
func secondField(r string) string {
	if r == Splade {
		return "sparse"
	}
	return "vector"
}

// VectorMetric is the vector_metric a second retriever's scores.vector is
// sent with: TAS-B scores by dot product, ada-002 by cosine similarity.
func VectorMetric(second string) string {
	if second == TASB {
		return "dot"
	}
	return ""
}

// chunkOf is the request chunk of one fused passage.
func (d *TREC) chunkOf(p HybridRank) Chunk {
	return Chunk{ID: p.DocID, DocID: p.DocID, Text: d.Passes[p.DocID],
		Vector: p.Vector, HasVector: p.HasVec, BM25: p.BM25, HasBM25: p.HasBM25,
		Sparse: p.Sparse, HasSparse: p.HasSparse}
}

// DL19Items builds one request per query from the top k of the hybrid list.
// Chunks carry scores.vector (ada-002 cosine) and scores.bm25 (raw BM25),
// each only when that retriever returned the passage, and the passage text.
// The RRF score is not sent: the retrieval score would then prefer it over the vector
// score, and a fused rank score is not a similarity.
func (d *TREC) DL19Items(k int) []Item { return d.PairItems(k, d.SecondRetriever()) }

// PairItems is DL19Items over the hybrid of BM25 and second: the passages
// as retrieved, with their grades, one request per judged query.
func (d *TREC) PairItems(k int, second string) []Item {
	var items []Item
	for _, qid := range d.QIDs {
		h := d.HybridPairWithout(qid, second, nil)
		if len(h) > k {
			h = h[:k]
		}
		q := d.Query[qid]
		if q == "" {
			q = d.Runs[BM25][qid].Query
		}
		it := Item{Set: d.Set, ID: qid, Tune: IsTune(d.Set, qid), Req: &Request{Query: q, VectorMetric: VectorMetric(second)}}
		for _, p := range h {
			it.Req.Chunks = append(it.Req.Chunks, d.chunkOf(p))
			g := d.Qrels[qid][p.DocID]
			it.Grades = append(it.Grades, g)
			it.ChunkRel = append(it.ChunkRel, g >= RelGrade)
			if g >= RelGrade {
				it.Answerable = true
			}
		}
		items = append(items, it)
	}
	return items
}

// ClapNQItems builds one request per question: the question and its single
// passage, no scores (the set has none). The passage is relevant exactly when
// the question is answerable.
func ClapNQItems(recs []ClapNQ) []Item {
	items := make([]Item, 0, len(recs))
	for _, r := range recs {
		it := Item{Set: "clapnq", ID: r.ID, Tune: IsTune("clapnq", r.ID), Answerable: r.Answerable,
			Req:      &Request{Query: r.Question, Chunks: []Chunk{{ID: r.ID, DocID: r.Title, Title: r.Title, Text: r.Passage}}},
			ChunkRel: []bool{r.Answerable}, Grades: []int{0}}
		if r.Answerable {
			it.Grades[0] = 3
		}
		items = append(items, it)
	}
	return items
}

// Half returns the items of one half: tune when tune is true, else held-out.
func Half(items []Item, tune bool) []Item {
	var out []Item
	for _, it := range items {
		if it.Tune == tune {
			out = append(out, it)
		}
	}
	return out
}
