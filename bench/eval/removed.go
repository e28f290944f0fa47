package eval

import (
	"strconv"
	"strings"
)

// AnswerRemovedItems asks the gate's own question at the query level, with
// real retriever scores: does this retrieval hold the answer? For every
// judged query it builds up to two requests from the hybrid top k:
//
//   - the top k as retrieved, labelled answerable, kept only when a passage
//     graded >= 2 is in it;
//   - the top k after every passage graded >= 1 has been removed from every
//     run, as if the index had never held it, labelled not answerable.
//
// The second is the situation a gate exists for: the index lacks the
// answer, and the retrievers return their next best, on topic but not
// answering. Both requests of a query share its half (split by query id),
// so no query is tuned on and reported.
func (d *TREC) AnswerRemovedItems(k int) []Item {
	return d.AnswerRemovedPairItems(k, d.SecondRetriever())
}

// AnswerRemovedPairItems is AnswerRemovedItems over the hybrid of BM25 and
// second. The items of every pairing of one set share the set's split, so
// a query is in the same half whichever retrievers found its passages.
func (d *TREC) AnswerRemovedPairItems(k int, second string) []Item {
	var items []Item
	for _, qid := range d.QIDs {
		grades := d.Qrels[qid]
		if len(grades) == 0 {
			continue // not judged: no label
		}
		q := d.Query[qid]
		if q == "" {
			q = d.Runs[BM25][qid].Query
		}
		drop := map[string]bool{}
		for doc, g := range grades {
			if g >= 1 {
				drop[doc] = true
			}
		}
		tune := IsTune(d.Set, qid)
		if it := d.removedItem(qid, q, d.HybridPairWithout(qid, second, nil), k, tune); it.Answerable {
			items = append(items, d.paired(it, second))
		}
		if it := d.removedItem(qid, q, d.HybridPairWithout(qid, second, drop), k, tune); !it.Answerable && len(it.Req.Chunks) > 0 {
			items = append(items, d.paired(it, second))
		}
	}
	return items
}

func (d *TREC) removedItem(qid, query string, h []HybridRank, k int, tune bool) Item {
	if len(h) > k {
		h = h[:k]
	}
	it := Item{Set: d.Set, ID: qid, Tune: tune, Req: &Request{Query: query}}
	for _, p := range h {
		it.Req.Chunks = append(it.Req.Chunks, d.chunkOf(p))
		g := d.Qrels[qid][p.DocID]
		it.Grades = append(it.Grades, g)
		it.ChunkRel = append(it.ChunkRel, g >= RelGrade)
		if g >= RelGrade {
			it.Answerable = true
		}
	}
	return it
}

// paired names an item's retriever pair and states its vector metric.
func (d *TREC) paired(it Item, second string) Item {
	it.Family = Pair{d.Set, second}.Name()
	it.Req.VectorMetric = VectorMetric(second)
	return it
}

// RetrieverName is a retriever's name as the report writes it.
func RetrieverName(r string) string {
	switch r {
	case Ada2:
		return "ada-002"
	case TASB:
		return "TAS-B"
	case Splade:
		return "SPLADE++"
	case BM25RM3:
		return "BM25+RM3"
	}
	return r
}

// Pair is one answer-removed family: BM25 fused with a second retriever on
// one TREC set.
type Pair struct{ Set, Second string }

// RemovedPairs are the answer-removed families the default is fitted and
// judged on: every run the data holds beside BM25, with its own score
// convention (ada-002 cosines, TAS-B dot products, SPLADE++ unbounded
// learned-sparse scores on two scales of their own).
var RemovedPairs = []Pair{{"dl19", Ada2}, {"dl19", TASB}, {"dl19", Splade}, {"dl21", Splade}}

// Name is the family's short name, as group names carry it: "dl19-tasb".
func (p Pair) Name() string {
	short := map[string]string{Ada2: "ada", TASB: "tasb", Splade: "splade", BM25RM3: "rm3"}[p.Second]
	return p.Set + "-" + short
}

// At is the family's name at one request size: "dl19-tasb@10".
func (p Pair) At(k int) string { return p.Name() + "@" + strconv.Itoa(k) }

// RemovedK are the request sizes of the answer-removed families.
var RemovedK = []int{5, 10, 20}

// Title is the family's name as the report writes it: "DL19 BM25 + TAS-B".
func (p Pair) Title() string {
	return strings.ToUpper(p.Set) + " BM25 + " + RetrieverName(p.Second)
}
