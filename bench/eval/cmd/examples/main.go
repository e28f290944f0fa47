// Command examples writes one of the answer-removed TREC sets as labeled
// examples for ctxgate calibrate (docs/calibration.md): one JSON line per
// request, {"request": ..., "label": 1|0, "group": query id}. It reads the
// data from ../shared/data (or $CTXGATE_DATA) and writes to stdout; the
// data itself is never committed.
//
//	go run ./bench/eval/cmd/examples -set dl21 -k 10 > dl21.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/ctxgate/ctxgate/bench/eval"
	"github.com/ctxgate/ctxgate/host/calibrate"
)

func main() {
	set := flag.String("set", "dl21", "dl19 (BM25 + ada-002 cosines) or dl21 (BM25 + SPLADE++ scores)")
	k := flag.Int("k", 10, "chunks per request: the top k of the hybrid retrieval")
	half := flag.String("half", "all", "all, tune or held (the project's fixed split by query id, eval.IsTune)")
	flag.Parse()
	if err := run(*set, *k, *half); err != nil {
		fmt.Fprintln(os.Stderr, "examples:", err)
		os.Exit(1)
	}
}

func run(set string, k int, half string) error {
	if half != "all" && half != "tune" && half != "held" {
		return errors.New("-half must be all, tune or held")
	}
	dir, err := eval.DataDirFrom(".")
	if err != nil {
		return err
	}
	d, err := eval.LoadTREC(dir, set)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	for _, it := range d.AnswerRemovedItems(k) {
		if half != "all" && it.Tune != (half == "tune") {
			continue
		}
		req, err := json.Marshal(requestJSON(it.Req))
		if err != nil {
			return err
		}
		if err := calibrate.WriteExample(w, req, it.Answerable, it.ID); err != nil {
			return err
		}
	}
	return w.Flush()
}

type request struct {
	Query  string  `json:"query"`
	Chunks []chunk `json:"chunks"`
}

type chunk struct {
	ID     string             `json:"id"`
	DocID  string             `json:"doc_id,omitempty"`
	Title  string             `json:"title,omitempty"`
	Text   string             `json:"text"`
	Scores map[string]float64 `json:"scores,omitempty"`
}

// requestJSON is the gate request of an item, a score sent only when its
// retriever returned the passage (as quality.ToGate builds it).
func requestJSON(r *eval.Request) request {
	out := request{Query: r.Query, Chunks: make([]chunk, len(r.Chunks))}
	for i, c := range r.Chunks {
		s := map[string]float64{}
		if c.HasVector {
			s["vector"] = c.Vector
		}
		if c.HasBM25 {
			s["bm25"] = c.BM25
		}
		if c.HasSparse {
			s["sparse"] = c.Sparse
		}
		out.Chunks[i] = chunk{ID: c.ID, DocID: c.DocID, Title: c.Title, Text: c.Text, Scores: s}
	}
	return out
}
