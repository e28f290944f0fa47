package wire

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
		// 1 MiB of request JSON: the worst requests of 4 MiB took a TinyGo
		// instance hundreds of milliseconds each, and their megabyte-sized
		// buffers left its heap, of a few tens of megabytes, too fragmented
		// for the next large one.
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
	pick(&r.MaxDecisionBytes, d.MaxDecisionBytes)
	return r
}
