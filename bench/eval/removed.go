package eval

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
		if it := d.removedItem(qid, q, d.Hybrid(qid), k, tune); it.Answerable {
			items = append(items, it)
		}
		if it := d.removedItem(qid, q, d.HybridWithout(qid, drop), k, tune); !it.Answerable && len(it.Req.Chunks) > 0 {
			items = append(items, it)
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
