package eval

import "sort"

// Request is the part of a gate request the evaluation builds: the harness
// does not import the core, so it keeps working (and measuring baselines)
// while gate/ is being changed. Package quality turns it into a
// gate.Request.
type Request struct {
	Query  string
	Chunks []Chunk
}

// Chunk is one retrieved passage of a Request. A score is sent only when
// its Has flag is set.
type Chunk struct {
	ID, DocID, Title, Text string
	Vector, BM25           float64
	HasVector, HasBM25     bool
}

// Item is one labeled gate request.
type Item struct {
	Set        string // "dl19" or "clapnq"
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

// HybridRank is one passage of the BM25 + ada-002 RRF fusion of a query.
type HybridRank struct {
	DocID           string
	RRF             float64
	BM25, Vector    float64
	HasBM25, HasVec bool
}

// Hybrid fuses BM25 and ada-002 top-100 lists of one query by reciprocal rank
// (1/(60+rank), rank 1-based). A passage absent from one list contributes
// nothing from it, and its score for that retriever stays absent: it ranked
// below that retriever's 100th hit, and a made-up number would be a lie the
// gate cannot tell from a real one. Ties break by docid, so the order is
// deterministic.
func (d *DL19) Hybrid(qid string) []HybridRank {
	idx := map[string]int{}
	var out []HybridRank
	add := func(run *Run, dense bool) {
		if run == nil {
			return
		}
		for _, h := range run.Hits {
			i, ok := idx[h.DocID]
			if !ok {
				i = len(out)
				idx[h.DocID] = i
				out = append(out, HybridRank{DocID: h.DocID})
			}
			out[i].RRF += 1 / float64(RRFK+h.Rank)
			if dense {
				out[i].Vector, out[i].HasVec = h.Score, true
			} else {
				out[i].BM25, out[i].HasBM25 = h.Score, true
			}
		}
	}
	add(d.Runs[BM25][qid], false)
	add(d.Runs[Ada2][qid], true)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].RRF != out[j].RRF {
			return out[i].RRF > out[j].RRF
		}
		return out[i].DocID < out[j].DocID
	})
	return out
}

// DL19Items builds one request per query from the top k of the hybrid list.
// Chunks carry scores.vector (ada-002 cosine) and scores.bm25 (raw BM25),
// each only when that retriever returned the passage, and the passage text.
// The RRF score is not sent: seed 004 would then prefer it over the vector
// score, and a fused rank score is not a similarity.
func (d *DL19) DL19Items(k int) []Item {
	var items []Item
	for _, qid := range d.QIDs {
		h := d.Hybrid(qid)
		if len(h) > k {
			h = h[:k]
		}
		q := d.Query[qid]
		if q == "" {
			q = d.Runs[BM25][qid].Query
		}
		it := Item{Set: "dl19", ID: qid, Tune: IsTune("dl19", qid), Req: &Request{Query: q}}
		for _, p := range h {
			c := Chunk{ID: p.DocID, DocID: p.DocID, Text: d.Passes[p.DocID],
				Vector: p.Vector, HasVector: p.HasVec, BM25: p.BM25, HasBM25: p.HasBM25}
			it.Req.Chunks = append(it.Req.Chunks, c)
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
