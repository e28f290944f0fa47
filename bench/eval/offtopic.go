package eval

import (
	"sort"

	"github.com/ctxgate/ctxgate/internal/keyhash"
)

// OffTopicItems builds the situation a retriever fails outright in: each
// question of items sent with the chunks another question of the same
// half retrieved (the next one in a fixed order by hash of the id), so the
// evidence is off topic and cannot hold the answer: label 0, certain
// without a judge. set names the family ("offtopic-clapnq"); an item keeps
// its question's half, so no question is tuned on and reported.
//
// NoMIRACL and ClapNQ hold on-topic passages only, so without this family
// a text model never sees a retrieval that missed the topic, and reads a
// best chunk covering a fifth of the question as it reads a paraphrase.
func OffTopicItems(set string, items []Item) []Item {
	var out []Item
	for _, tune := range []bool{true, false} {
		var half []Item
		for _, it := range items {
			if it.Tune == tune && len(it.Req.Chunks) > 0 {
				half = append(half, it)
			}
		}
		// A fixed order that is not the files' (which may group topics).
		order := make([]int, len(half))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool {
			return keyhash.Sum64(set+":"+half[order[a]].Set+":"+half[order[a]].ID) < keyhash.Sum64(set+":"+half[order[b]].Set+":"+half[order[b]].ID)
		})
		for n, i := range order {
			other := half[order[(n+1)%len(order)]]
			if other.ID == half[i].ID && other.Set == half[i].Set {
				continue
			}
			q := half[i]
			out = append(out, Item{Set: set, ID: q.Set + ":" + q.ID, Tune: tune,
				Req: &Request{Query: q.Req.Query, Chunks: other.Req.Chunks}})
		}
	}
	return out
}
