package gate

import (
	"strings"
	"testing"
)

// distinctDocsRef is the quadratic count docSet.distinct replaced: a doc id
// counts when no earlier chunk has it.
func distinctDocsRef(w []chunkWork) int {
	docs := 0
	for i := range w {
		dup := false
		for j := 0; j < i; j++ {
			if w[j].c.DocID == w[i].c.DocID {
				dup = true
				break
			}
		}
		if !dup {
			docs++
		}
	}
	return docs
}

func workOfDocIDs(ids []string) []chunkWork {
	w := make([]chunkWork, len(ids))
	for i, id := range ids {
		w[i].c = &Chunk{DocID: id}
	}
	return w
}

func TestDocSetMatchesRef(t *testing.T) {
	many := make([]string, 300)
	for i := range many {
		many[i] = "doc-" + strings.Repeat("x", i%17) + string(rune('a'+i%7))
	}
	cases := [][]string{
		nil,
		{""},
		{"", ""},
		{"a", "b", "a", ""},
		{"d1", "d1", "d2"},
		{"same-long-document-id", "same-long-document-id", "same-long-document-iD"},
		{"12345678", "123456789", "1234567", "12345678"},
		many,
	}
	var d docSet
	for _, ids := range cases {
		w := workOfDocIDs(ids)
		if got, want := d.distinct(w), distinctDocsRef(w); got != want {
			t.Errorf("%d ids: distinct %d, reference %d", len(ids), got, want)
		}
	}
}

func FuzzDocSet(f *testing.F) {
	f.Add("a,b,a,,c")
	f.Add("x")
	f.Add(",,,")
	f.Fuzz(func(t *testing.T, list string) {
		w := workOfDocIDs(strings.Split(list, ","))
		var d docSet
		if got, want := d.distinct(w), distinctDocsRef(w); got != want {
			t.Fatalf("%q: distinct %d, reference %d", list, got, want)
		}
	})
}
