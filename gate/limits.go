package gate

import "strconv"

// DefaultLimits are the input bounds used when a policy sets none. They are
// generous for real RAG traffic (a request is usually 5-50 chunks of a few
// KiB, well under 256 KiB) and bound what one hostile request can cost a
// Wasm instance, in time and in memory. The gate's work is linear in the
// request's bytes, and the worst inputs within these limits
// (internal/hostile, host/adversarial_test.go) cost the TinyGo module tens
// of milliseconds a call and a few MiB of its heap; docs/security.md has
// the figures. A policy that needs more (many chunks with large
// embeddings) raises them and accepts that cost, linear in the size.
func DefaultLimits() Limits {
	return Limits{
		// 1 MiB of request JSON. It was 4 MiB: the worst requests of that
		// size took a TinyGo instance hundreds of milliseconds each, and
		// their megabyte-sized buffers left its heap, of a few tens of
		// megabytes, too fragmented for the next large one.
		MaxRequestBytes:  1 << 20,
		MaxChunks:        1000,      // per list (chunks, each results_per_query list)
		MaxQueries:       16,        // results_per_query lists (phrasings)
		MaxChunkBytes:    64 << 10,  // 64 KiB of text per chunk
		MaxTotalBytes:    768 << 10, // 768 KiB of chunk text in the whole request
		MaxQueryBytes:    4 << 10,   // 4 KiB question
		MaxEmbeddingDims: 4096,      // covers every common embedding model (<= 3072 today)
		MaxDepth:         32,        // a request needs 5 levels; metadata gets the rest
		// 2 MiB of decision (or validation) JSON: every byte of chunk text
		// kept and escaped with room to spare, while escaping cannot make
		// the output many times the request (32 chunk texts of 64 KiB of
		// '<' made a 12.6 MB decision).
		MaxDecisionBytes: 2 << 20,
	}
}

// resolved returns the limits to apply: a nil *Limits or any field <= 0
// means the default for that field, so a policy can set one limit and keep
// the others.
func (l *Limits) resolved() Limits {
	d := DefaultLimits()
	if l == nil {
		return d
	}
	r := *l
	pick := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	pick(&r.MaxRequestBytes, d.MaxRequestBytes)
	pick(&r.MaxChunks, d.MaxChunks)
	pick(&r.MaxQueries, d.MaxQueries)
	pick(&r.MaxChunkBytes, d.MaxChunkBytes)
	pick(&r.MaxTotalBytes, d.MaxTotalBytes)
	pick(&r.MaxQueryBytes, d.MaxQueryBytes)
	pick(&r.MaxEmbeddingDims, d.MaxEmbeddingDims)
	pick(&r.MaxDepth, d.MaxDepth)
	pick(&r.MaxDecisionBytes, d.MaxDecisionBytes)
	return r
}

// checkLimits applies the limits to a request built in Go, with the same
// errors DecodeRequest gives for the same excess in JSON.
func checkLimits(req *Request, lim *Limits) *Error {
	l := lim.resolved()
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

// checkListLimits is checkLimits for one chunk list: req.Chunks (q < 0) or
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
			return limitError(idx(listPath(q), i, ".text"), "is "+strconv.Itoa(len(c.Text))+" bytes", l.MaxChunkBytes, "max_chunk_bytes")
		}
		if *total += len(c.Text); *total > l.MaxTotalBytes {
			return limitError(idx(listPath(q), i, ".text"), "brings the request's chunk text to "+strconv.Itoa(*total)+" bytes", l.MaxTotalBytes, "max_total_bytes")
		}
		if len(c.Embedding) > l.MaxEmbeddingDims {
			return limitError(idx(listPath(q), i, ".embedding"), "has "+strconv.Itoa(len(c.Embedding))+" dimensions", l.MaxEmbeddingDims, "max_embedding_dims")
		}
	}
	return nil
}

// listPath names chunk list q for checkListLimits.
func listPath(q int) string {
	if q < 0 {
		return "chunks"
	}
	return idx("results_per_query", q, "")
}
