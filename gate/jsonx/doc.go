// Package jsonx is a strict RFC 8259 JSON parser and a deterministic writer
// for the gate and its Wasm guests. It uses no reflection, no fmt and no
// encoding/json (slow and large under TinyGo), never panics, and allocates
// little: the values of one document live in one node arena, and strings are
// views of the parser's own copy of the input, materialised only when read.
// A Parser keeps that memory from one document to the next.
//
// # Rationale (decisions a newcomer may question)
//
// Why not encoding/json? Under TinyGo it pulls in reflection, grows the
// module, and allocates per value; on a 25 KB request jsonx parses 2-4x
// faster natively with over 100x fewer allocations (see BenchmarkParse and
// BenchmarkParseStdlibBaseline), and the gap is larger under TinyGo.
//
// Why reject duplicate keys? RFC 8259 only says names "SHOULD be unique".
// Parsers then differ (first wins, last wins, error), so {"action":"refuse",
// "action":"inject"} can mean different things to a proxy and to the gate,
// and a signed policy could be read differently from what was signed.
//
// Why reject lone surrogates instead of writing U+FFFD? A lone \uD800 has no
// UTF-8 form. Replacing it silently changes text that may be compared,
// hashed or cited; an error naming the offset is clearer and matches the
// rule for invalid UTF-8.
//
// Why reject 1e400 but accept 1e-400? Overflow has no float64 value (it
// would become Inf and poison every score); underflow rounds to 0 or a
// subnormal, which is the correct nearest value.
//
// Why keep raw number text? So a host can re-serialize numbers it did not
// touch byte-for-byte, and so canonical bytes (policy hashes, signatures)
// do not depend on float formatting.
//
// Why escape <, >, &, U+2028 and U+2029 on output? Decisions and prompts
// are embedded in HTML pages, logs and JavaScript sources; the escaped form
// cannot close a tag or a JS string line. It matches encoding/json's default
// output byte for byte (TestAppendStringMatchesEncodingJSON).
//
// Why offsets and not strings? The tree used to hold each string and raw
// number as a Go string viewing the input buffer, and each container as a
// slice of a shared slab. Under TinyGo that made the collector quadratic:
// its heap is 16-byte blocks where an object's last block is its head, and
// marking a pointer first walks forward from the block it points into to
// that head (runtime.findHead, 64 bytes per step over whole tail bytes). A
// pointer into the middle of a 160 KB buffer costs ~2,500 steps, every
// collection, for every such pointer: 10 chunks of 1536-dim embeddings took
// 0.6-2 s per call in the TinyGo module, 32k small strings 5 s. A Value now
// holds (off, n) int32 pairs into the source or the arena, and its one
// pointer is to the document's small header, so marking the tree is linear
// and cheap; a []float64 or []byte is pointer-free and never scanned. The
// cost moves to the readers: Str returns a view, and whoever keeps strings
// long or keeps many should copy them (gate's request decoder copies the
// few it keeps: query, ids, titles, texts). A number keeps only its text
// and Float converts it when asked: that keeps a Value at 16 bytes on
// wasm32, so the 1 Mi values a 4 MiB request may hold fit the TinyGo heap
// (a 24-byte Value ran it out of memory), and numbers nobody reads (chunk
// metadata) cost no conversion. The parser still converts the numbers that
// could overflow, to reject them.
//
// Why a reusable Parser? A Wasm guest decides one request after another.
// Reusing the input copy, the arena and the scratch keeps a warm call from
// allocating a tree per request, so TinyGo rarely needs to collect at all.
// The price is that a Value is valid only until the next parse with the
// same Parser; package-level Parse allocates a fresh one each time.
//
// Why an iterative parser? Wasm stacks are small and fixed; recursion on a
// hostile document would trap. Depth costs heap here and is limited by
// maxDepth. The writers recurse, but only over values Parse accepted with a
// depth limit.
package jsonx
