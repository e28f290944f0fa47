package wire

// DefaultLimits are the input bounds used when a policy sets none. They are
// generous for real RAG traffic (a request is usually 5-50 chunks of a few
// KiB) and small enough that one hostile request cannot exhaust a Wasm
// instance's memory: the JSON tree of a 4 MiB request stays well under the
// module's memory cap.
func DefaultLimits() Limits {
	return Limits{
		MaxRequestBytes:  4 << 20,  // 4 MiB of request JSON
		MaxChunks:        1000,     // per list (chunks, each results_per_query list)
		MaxQueries:       16,       // results_per_query lists (phrasings)
		MaxChunkBytes:    64 << 10, // 64 KiB of text per chunk
		MaxTotalBytes:    2 << 20,  // 2 MiB of chunk text in the whole request
		MaxQueryBytes:    4 << 10,  // 4 KiB question
		MaxEmbeddingDims: 4096,     // covers every common embedding model (<= 3072 today)
		MaxDepth:         32,       // a request needs 5 levels; metadata gets the rest
	}
}

// Resolved returns the limits to apply: a nil *Limits or any field <= 0
// means the default for that field, so a policy can set one limit and keep
// the others.
func (l *Limits) Resolved() Limits {
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
	return r
}
