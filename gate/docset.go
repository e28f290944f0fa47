package gate

import "github.com/ctxgate/ctxgate/gate/internal/swar"

// docSet counts distinct doc ids with a hash table of first occurrences
// (index+1 into the chunks, reused between decisions). Comparing each
// chunk's doc id with every earlier one was quadratic: at 100 chunks it
// took a fifth of the TinyGo module's decide.
type docSet struct {
	slots []int32
}

func (d *docSet) distinct(w []chunkWork) int { return d.count(w, false) }

// distinctDocs is distinct with every chunk that has no doc_id counted as a
// document of its own: chunks of unknown origin are not evidence that one
// document holds several of them.
func (d *docSet) distinctDocs(w []chunkWork) int { return d.count(w, true) }

func (d *docSet) count(w []chunkWork, emptyApart bool) int {
	d.slots = emptyTable(d.slots, 16, len(w))
	mask := uint64(len(d.slots) - 1)
	n := 0
	for i := range w {
		id := w[i].c.DocID
		if emptyApart && id == "" {
			n++
			continue
		}
		for j := hashID(id) & mask; ; j = (j + 1) & mask {
			k := d.slots[j]
			if k == 0 {
				d.slots[j] = int32(i + 1)
				n++
				break
			}
			if k <= int32(len(w)) && w[k-1].c.DocID == id {
				break
			}
		}
	}
	return n
}

// hashID hashes a doc id eight bytes at a time (the hash is only a bucket:
// ids that collide are compared).
func hashID(s string) uint64 {
	h := uint64(hashSeed)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		h = hashBlock(h, swar.Load64(s, i))
	}
	var acc uint64
	for j := len(s) - 1; j >= i; j-- {
		acc = acc<<8 | uint64(s[j])
	}
	return hashSum(h, acc, uint(len(s)-i)*8)
}
