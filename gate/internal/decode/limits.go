package decode

import (
	"strconv"

	"github.com/ctxgate/ctxgate/gate/internal/jsonread"
)

// CheckLimits applies the limits to a request built in Go, with the same
// errors DecodeRequest gives for the same excess in JSON.
func CheckLimits(req *Request, lim *Limits) *Error {
	l := lim.Resolved()
	if len(req.Query) > l.MaxQueryBytes {
		return limitError("query", "is "+strconv.Itoa(len(req.Query))+" bytes", l.MaxQueryBytes, "max_query_bytes")
	}
	if len(req.QueryEmbedding) > l.MaxEmbeddingDims {
		return limitError("query_embedding", "has "+strconv.Itoa(len(req.QueryEmbedding))+" dimensions", l.MaxEmbeddingDims, "max_embedding_dims")
	}
	if len(req.ResultsPerQuery) > l.MaxQueries {
		return limitError("results_per_query", "has "+strconv.Itoa(len(req.ResultsPerQuery))+" result lists", l.MaxQueries, "max_queries")
	}
	total := 0
	if err := checkListLimits(req.Chunks, -1, &l, &total); err != nil {
		return err
	}
	for q, list := range req.ResultsPerQuery {
		if err := checkListLimits(list, q, &l, &total); err != nil {
			return err
		}
	}
	return nil
}

// checkListLimits is CheckLimits for one chunk list: req.Chunks (q < 0) or
// results_per_query[q]; total carries the text bytes over the lists. A
// plain function, not a closure: under TinyGo a closure's captured
// variables are a heap allocation per call, and Decide runs per request.
// Paths are built only for an error.
func checkListLimits(list []Chunk, q int, l *Limits, total *int) *Error {
	if len(list) > l.MaxChunks {
		return limitError(listPath(q), "has "+strconv.Itoa(len(list))+" chunks", l.MaxChunks, "max_chunks")
	}
	for i := range list {
		c := &list[i]
		if len(c.Text) > l.MaxChunkBytes {
			return limitError(jsonread.Idx(listPath(q), i, ".text"), "is "+strconv.Itoa(len(c.Text))+" bytes", l.MaxChunkBytes, "max_chunk_bytes")
		}
		if *total += len(c.Text); *total > l.MaxTotalBytes {
			return limitError(jsonread.Idx(listPath(q), i, ".text"), "brings the request's chunk text to "+strconv.Itoa(*total)+" bytes", l.MaxTotalBytes, "max_total_bytes")
		}
		if len(c.Embedding) > l.MaxEmbeddingDims {
			return limitError(jsonread.Idx(listPath(q), i, ".embedding"), "has "+strconv.Itoa(len(c.Embedding))+" dimensions", l.MaxEmbeddingDims, "max_embedding_dims")
		}
	}
	return nil
}

// listPath names chunk list q for checkListLimits.
func listPath(q int) string {
	if q < 0 {
		return "chunks"
	}
	return jsonread.Idx("results_per_query", q, "")
}
