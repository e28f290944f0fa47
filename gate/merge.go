package gate

import "math"

// Multi-query merge (the retrieval-enhancements document). Lists are read in
// order (original phrasing first). The key is doc_id, else title; a result
// with neither is skipped. A stored entry is replaced only by a strictly
// higher vector similarity (sc's: the cosine level, absent counting 0, or
// for a metric without levels the similarity, absent counting lowest). The
// merged list is stable-sorted by similarity, descending, so ties keep
// first-seen order, and cut to max_results.
func mergeResults(lists [][]Chunk, maxResults int, sc *scoreScale) []Chunk {
	vectorOf := func(c *Chunk) float64 {
		switch {
		case !c.Scores.HasVector && sc.levels:
			return 0
		case !c.Scores.HasVector:
			return -math.MaxFloat64
		case sc.levels:
			return clamp01(similarity(sc.metric, c.Scores.Vector))
		}
		return similarity(sc.metric, c.Scores.Vector)
	}
	var out []Chunk
	index := map[string]int{} // lookup only; never iterated
	for _, list := range lists {
		for i := range list {
			c := &list[i]
			key := c.DocID
			if key == "" {
				key = c.Title
				if key == "" {
					continue
				}
				key = "t\x00" + key // a title never collides with a doc_id
			} else {
				key = "d\x00" + key
			}
			found, seen := index[key]
			if !seen {
				index[key] = len(out)
				out = append(out, *c)
				continue
			}
			if vectorOf(c) > vectorOf(&out[found]) {
				out[found] = *c
			}
		}
	}
	key := make([]float64, len(out))
	order := make([]int, len(out))
	for i := range out {
		key[i] = vectorOf(&out[i])
		order[i] = i
	}
	sortDesc(order, key, make([]int, len(out)))
	sorted := make([]Chunk, len(out))
	for i, j := range order {
		sorted[i] = out[j]
	}
	out = sorted
	if maxResults < 1 {
		maxResults = 1
	}
	if maxResults > 20 {
		maxResults = 20
	}
	if len(out) > maxResults {
		out = out[:maxResults]
	}
	return out
}
