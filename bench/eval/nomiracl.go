package eval

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// NoMIRACLLangs are the nine languages of ../shared/data/nomiracl-visible.
var NoMIRACLLangs = []string{"es", "fa", "fi", "fr", "hi", "id", "ko", "sw", "te"}

// NoMIRACL is one NoMIRACL query: ten Wikipedia passages retrieved for it,
// all on topic. Relevant is true when a human judged at least one of them
// relevant; otherwise all ten are hard negatives.
type NoMIRACL struct {
	Lang, ID, Question string
	Relevant           bool
	Passages           []NoMIRACLPassage
}

// NoMIRACLPassage is one passage. The files shuffle the passages per query,
// so their order carries no signal (the upstream files list relevant
// passages first).
type NoMIRACLPassage struct {
	DocID, Title, Text string
}

// LoadNoMIRACL reads one language's queries in file order.
func LoadNoMIRACL(dataDir, lang string) ([]NoMIRACL, error) {
	path := filepath.Join(dataDir, "nomiracl-visible", lang+".jsonl.gz")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, errors.New(path + ": " + err.Error())
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var out []NoMIRACL
	for sc.Scan() {
		var rec struct {
			QueryID  string `json:"query_id"`
			Label    int    `json:"label_relevant"`
			Question string `json:"question"`
			Passages []struct {
				DocID string `json:"docid"`
				Title string `json:"title"`
				Text  string `json:"text"`
			} `json:"passages"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, errors.New(path + ": " + err.Error())
		}
		q := NoMIRACL{Lang: lang, ID: rec.QueryID, Question: rec.Question, Relevant: rec.Label == 1}
		for _, p := range rec.Passages {
			q.Passages = append(q.Passages, NoMIRACLPassage{DocID: p.DocID, Title: p.Title, Text: p.Text})
		}
		out = append(out, q)
	}
	return out, sc.Err()
}

// NoMIRACLItems builds one text-only request per query: the question and
// its ten passages with their titles, no scores (the set has none). The
// query label is whether any passage is relevant; passage labels are not in
// the files, so ChunkRel is left empty.
func NoMIRACLItems(recs []NoMIRACL) []Item {
	items := make([]Item, 0, len(recs))
	for _, r := range recs {
		set := "nomiracl-" + r.Lang
		it := Item{Set: set, ID: r.ID, Tune: IsTune(set, r.ID), Answerable: r.Relevant,
			Req: &Request{Query: r.Question}}
		for _, p := range r.Passages {
			// "827#5" is passage 5 of article 827: the article is the
			// document, as a RAG index would record it.
			doc, _, _ := strings.Cut(p.DocID, "#")
			it.Req.Chunks = append(it.Req.Chunks, Chunk{ID: p.DocID, DocID: doc, Title: p.Title, Text: p.Text})
		}
		items = append(items, it)
	}
	return items
}
