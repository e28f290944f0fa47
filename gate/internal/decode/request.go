// Package decode reads the gate's input: a request (the direct decoder and
// the tree decoder whose errors are the contract), and answer validation's
// input. Every error is a *wire.Error naming the field.
package decode

import (
	"strconv"
	"strings"

	"github.com/ctxgate/ctxgate/gate/internal/jsonread"
	"github.com/ctxgate/ctxgate/gate/internal/timefmt"
	"github.com/ctxgate/ctxgate/gate/jsonx"
	"github.com/ctxgate/ctxgate/gate/wire"
)

// ParseRequest parses and validates a request document (docs/decision.md) into
// a Request of the caller's. Nothing is silently truncated or guessed:
// input the gate cannot decide on correctly is an error naming the field.
//
//   - An empty (or all-whitespace) body is bad_json "empty request"; invalid
//     JSON is bad_json with the byte offset; a top level that is not an
//     object is bad_json.
//   - Unknown fields are bad_field "unknown field", except a chunk's
//     "metadata", which may hold anything and is ignored.
//   - An optional field given as null counts as absent (jsonread).
//   - Limits (code "limit", naming the field): request bytes, nesting depth,
//     JSON values (one per 8 bytes of max_request_bytes, and 1024), query bytes,
//     chunks per list, results_per_query lists, text bytes per chunk and in
//     total, embedding dimensions. lim may be nil, and a zero field means
//     the default (wire.DefaultLimits).
//
// With inPlace the caller owns data and is done with it (a Wasm guest's
// freshly read input): the document is parsed without a copy
// (jsonx.ParseInPlace) and may be modified; the Request does not alias it.
func ParseRequest(data []byte, lim *Limits, inPlace bool) (*Request, *Error) {
	var ps jsonx.Parser
	return decodeRequest(&ps, nil, data, lim, inPlace)
}

// Decode is ParseRequest into memory m keeps from one call to the next, so a
// Wasm guest deciding one request after another allocates nothing to
// decode in steady state, which is what keeps TinyGo's collector out of the
// way (jsonx/doc.go). The Request belongs to m: it, its strings and slices,
// and anything made from them (a decision's chunk ids, the query) are valid
// only until m's next Decode. data is not modified unless inPlace.
func (m *Memory) Decode(data []byte, lim *Limits, inPlace bool) (*Request, *Error) {
	return decodeRequest(&m.ps, m, data, lim, inPlace)
}

// Holds reports whether req is the Request m's last Decode read with the
// direct decoder, into m's own memory (the tree decoder's Request is its
// own): only then do m's as-is marks (AsIs) describe its texts.
func (m *Memory) Holds(req *Request) bool { return req == &m.req }

type requestDecoder struct {
	lim       Limits
	totalText int
	dims      int    // the embedding length every embedding must have; 0 until known
	dimsFrom  string // which field set dims, for the mismatch message
}

// decodeRequest decodes data with the direct decoder (direct.go)
// and, when that gives up (every invalid request, and a few rare valid
// shapes), with the tree decoder, whose errors are the contract. m is the
// engine's memory for an engine-owned Request, nil for a caller-owned one;
// ps holds the tree decoder's parse tree.
func decodeRequest(ps *jsonx.Parser, m *Memory, data []byte, lim *Limits, inPlace bool) (*Request, *Error) {
	if l := lim.Resolved(); len(data) <= l.MaxRequestBytes {
		if req, ok := decodeDirect(data, &l, m, m != nil); ok {
			return req, nil
		}
	}
	req, err := decodeRequestTree(ps, data, lim, inPlace)
	// The Request owns its strings and an error its message: the tree is
	// not read again, and what a large one took is not kept (Trim).
	ps.Trim()
	return req, err
}

// decodeRequestTree parses data with ps. The parse tree and its strings live in
// ps's memory until its next parse, so every string the Request keeps is
// copied (the query, and one block per chunk: ownStrings): the Request must
// outlive the tree, and under
// TinyGo a string viewing the middle of the input buffer makes every
// collection walk that buffer (jsonx/doc.go). They are few: the query, and
// each chunk's id, doc id, title, text and time.
func decodeRequestTree(ps *jsonx.Parser, data []byte, lim *Limits, inPlace bool) (*Request, *Error) {
	d := requestDecoder{lim: lim.Resolved()}
	if len(data) > d.lim.MaxRequestBytes {
		return nil, limitError("", "request is "+strconv.Itoa(len(data))+" bytes", d.lim.MaxRequestBytes, "max_request_bytes")
	}
	if isBlank(data) {
		return nil, errorf(CodeBadJSON, "", "empty request")
	}
	// The value budget bounds the parse's work and the tree's memory (a
	// node is 16 bytes in the TinyGo module): a request gets one value per
	// 8 bytes of max_request_bytes (and 1024: 513 Ki by default), more than
	// any real request needs (4 MiB of embeddings written to 6 decimals
	// is 400 Ki numbers), while a hostile "[0,0,0,..." is refused at the
	// budget instead of becoming a tree several times its size. A chunk's
	// metadata is checked but never read: it is not kept in the tree
	// (jsonx.Limits.Skip), so a hostile metadata value costs its keys'
	// check, not a node a value.
	pl := jsonx.Limits{MaxDepth: d.lim.MaxDepth, MaxValues: valueBudget(&d.lim), Skip: "metadata"}
	doc, err := jsonread.ParseWith(ps, data, pl, "one value per 8 bytes of max_request_bytes, and 1024", inPlace)
	if err != nil {
		return nil, err
	}
	if doc.Kind() != jsonx.Object {
		return nil, errorf(CodeBadJSON, "", "request must be a JSON object, not "+doc.Kind().String())
	}
	top := jsonread.Top(doc, CodeBadField)
	if err := top.Strict(requestFields); err != nil {
		return nil, err
	}
	req := &Request{}

	// query: required, trimmed, non-empty. The limit applies to the bytes as
	// sent, before trimming.
	q, _, err := top.Str("query", true)
	if err != nil {
		return nil, err
	}
	if len(q) > d.lim.MaxQueryBytes {
		return nil, limitError("query", "is "+strconv.Itoa(len(q))+" bytes", d.lim.MaxQueryBytes, "max_query_bytes")
	}
	req.Query = strings.Clone(strings.TrimSpace(q))
	if wire.BlankQuery(req.Query) {
		return nil, errorf(CodeBadField, "query", "must not be empty")
	}

	// query_embedding first, so chunk embeddings are checked against it.
	if a, ok, err := top.Arr("query_embedding", false); err != nil {
		return nil, err
	} else if ok {
		if req.QueryEmbedding, err = d.embedding(a, jsonread.Root.Key("query_embedding")); err != nil {
			return nil, err
		}
	}

	if a, ok, err := top.Arr("chunks", false); err != nil {
		return nil, err
	} else if ok {
		if req.Chunks, err = d.chunkList(a, jsonread.Root.Key("chunks")); err != nil {
			return nil, err
		}
	}

	// results_per_query: one chunk list per phrasing (multi-query). Ids must be
	// unique within a list; the same chunk found by several phrasings is the
	// point of the merge, so ids may repeat across lists.
	if a, ok, err := top.Arr("results_per_query", false); err != nil {
		return nil, err
	} else if ok {
		at := jsonread.Root.Key("results_per_query")
		if a.Len() > d.lim.MaxQueries {
			return nil, limitError(at.String(), "has "+strconv.Itoa(a.Len())+" result lists", d.lim.MaxQueries, "max_queries")
		}
		req.ResultsPerQuery = make([][]Chunk, a.Len())
		for i := range req.ResultsPerQuery {
			list := a.Index(i)
			if list.Kind() != jsonx.Array {
				return nil, jsonread.TypeError(CodeBadField, at.Index(i), jsonx.Array)
			}
			if req.ResultsPerQuery[i], err = d.chunkList(list, at.Index(i)); err != nil {
				return nil, err
			}
		}
	}

	if s, ok, err := top.Str("now", false); err != nil {
		return nil, err
	} else if ok {
		sec, msg := timefmt.ParseRFC3339(s)
		if msg != "" {
			return nil, errorf(CodeBadField, "now", msg)
		}
		req.Now, req.NowSec, req.HasNow = strings.Clone(s), sec, true
	}

	// vector_metric and rerank_scale: any string here; the engine checks the
	// name (a Go caller's Request is checked there too, with the same error).
	m, err := name(top, "vector_metric", func(s string) (string, bool) { m, ok := wire.ParseVectorMetric(s); return string(m), ok })
	if err != nil {
		return nil, err
	}
	r, err := name(top, "rerank_scale", func(s string) (string, bool) { r, ok := wire.ParseRerankScale(s); return string(r), ok })
	if err != nil {
		return nil, err
	}
	req.VectorMetric, req.RerankScale = wire.VectorMetric(m), wire.RerankScale(r)
	return req, nil
}

// name reads the optional string member key: the constant parse gives
// for a name the gate knows (no string of the request's is kept), else a
// copy of the string, for the engine to refuse.
func name(o jsonread.Obj, key string, parse func(string) (string, bool)) (string, *Error) {
	s, ok, err := o.Str(key, false)
	if err != nil || !ok {
		return "", err
	}
	if c, known := parse(s); known {
		return c, nil
	}
	return strings.Clone(s), nil
}

// valueBudget is the most JSON values a request may hold: one per 8
// bytes of max_request_bytes, and 1024 more so that a small request of
// short values is never refused for them (lim resolved).
func valueBudget(lim *Limits) int { return lim.MaxRequestBytes/8 + 1024 }

func isBlank(data []byte) bool {
	for _, c := range data {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// chunkList decodes one list of chunks. A chunk without an id gets "c1",
// "c2"... from its 1-based position in its list, so every outcome can be
// referred to; such an id may collide with an explicit one (a chunk with id
// "c2" at position 1 and one without an id at position 2), which is the
// ordinary duplicate-id error. Duplicate ids within a list are bad_field on
// the second one: the decision refers to chunks by id, so two chunks with one
// id would make it ambiguous.
func (d *requestDecoder) chunkList(a *jsonx.Value, at jsonread.Path) ([]Chunk, *Error) {
	n := a.Len()
	if n > d.lim.MaxChunks {
		return nil, limitError(at.String(), "has "+strconv.Itoa(n)+" chunks", d.lim.MaxChunks, "max_chunks")
	}
	out := make([]Chunk, n)
	for i := range out {
		if err := d.chunk(&out[i], a.Index(i), at.Index(i), i); err != nil {
			return nil, err
		}
	}
	if i, j := firstDuplicateID(out); i >= 0 {
		return nil, errorf(CodeBadField, at.Index(i).Key("id").String(),
			"duplicate id \""+clipText(out[i].ID)+"\" (first used by "+at.Index(j).String()+")")
	}
	return out, nil
}

// firstDuplicateID returns the index of the first chunk whose id appeared
// before, and the index of that earlier chunk; (-1, -1) when ids are unique.
// jsonx.Repeats keeps it linear for hostile ids, colliding ones included.
func firstDuplicateID(cs []Chunk) (int, int) {
	var r jsonx.Repeats
	h := r.Hashes(len(cs))
	for i := range cs {
		h[i] = jsonx.HashKey(cs[i].ID)
	}
	ids := chunkIDs(cs)
	return r.First(&ids)
}

// chunkIDs gives jsonx.Repeats the ids of a chunk list.
type chunkIDs []Chunk

func (c *chunkIDs) Key(i int) string { return (*c)[i].ID }

func clipText(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

func (d *requestDecoder) chunk(c *Chunk, v *jsonx.Value, at jsonread.Path, i int) *Error {
	o, err := jsonread.AsObject(v, at, CodeBadField)
	if err != nil {
		return err
	}
	if err := o.Strict(chunkFields); err != nil {
		return err
	}
	id, ok, err := o.Str("id", false)
	if err != nil {
		return err
	}
	autoID := !ok
	if autoID {
		id = "c" + strconv.Itoa(i+1)
	} else if id == "" {
		return o.Fail("id", "must not be empty (omit it to number chunks by position)")
	}
	c.ID = id
	if c.DocID, _, err = o.Str("doc_id", false); err != nil {
		return err
	}
	if c.Title, _, err = o.Str("title", false); err != nil {
		return err
	}
	if c.Text, _, err = o.Str("text", false); err != nil {
		return err
	}
	if len(c.Text) > d.lim.MaxChunkBytes {
		return limitError(at.Key("text").String(), "is "+strconv.Itoa(len(c.Text))+" bytes", d.lim.MaxChunkBytes, "max_chunk_bytes")
	}
	d.totalText += len(c.Text)
	if d.totalText > d.lim.MaxTotalBytes {
		return limitError(at.Key("text").String(), "brings the request's chunk text to "+strconv.Itoa(d.totalText)+" bytes", d.lim.MaxTotalBytes, "max_total_bytes")
	}
	if s, ok, err := o.Object("scores", false); err != nil {
		return err
	} else if ok {
		if err := scores(&c.Scores, s); err != nil {
			return err
		}
	}
	if s, ok, err := o.Str("updated_at", false); err != nil {
		return err
	} else if ok {
		sec, msg := timefmt.ParseRFC3339(s)
		if msg != "" {
			return o.Fail("updated_at", msg)
		}
		c.UpdatedAt, c.UpdatedSec, c.HasUpdated = s, sec, true
	}
	if c.Trust, c.HasTrust, err = o.Num("trust", false); err != nil {
		return err
	}
	if c.HasTrust && (c.Trust < 0 || c.Trust > 1) {
		return o.Fail("trust", "must be in [0, 1]")
	}
	if c.Untrusted, _, err = o.Bool("untrusted", false); err != nil {
		return err
	}
	if a, ok, err := o.Arr("embedding", false); err != nil {
		return err
	} else if ok {
		if c.Embedding, err = d.embedding(a, at.Key("embedding")); err != nil {
			return err
		}
	}
	// temperature (sufficiency's density): any finite number; the policy supplies the
	// default when absent.
	if c.Temperature, c.HasTemperature, err = o.Num("temperature", false); err != nil {
		return err
	}
	ownStrings(c, autoID)
	return nil
}

// ownStrings replaces the chunk's strings, views of the parse tree, by one
// copy of them all: one allocation per chunk instead of five. The substrings
// point into that chunk's own small block, never into the request buffer.
func ownStrings(c *Chunk, autoID bool) {
	id := c.ID
	if autoID {
		id = "" // a fresh string already
	}
	var b strings.Builder
	b.Grow(len(id) + len(c.DocID) + len(c.Title) + len(c.Text) + len(c.UpdatedAt))
	for _, s := range [...]string{id, c.DocID, c.Title, c.Text, c.UpdatedAt} {
		b.WriteString(s)
	}
	all := b.String()
	next := func(s string) string {
		out := all[:len(s)]
		all = all[len(s):]
		return out
	}
	if !autoID {
		c.ID = next(c.ID)
	}
	c.DocID, c.Title, c.Text, c.UpdatedAt = next(c.DocID), next(c.Title), next(c.Text), next(c.UpdatedAt)
}

// scores reads a chunk's scores, recording presence in the Has* flags so a
// present 0 is never mistaken for a missing score.
//   - vector is any finite number, as the retriever gave it: what it may be
//     depends on the request's vector_metric, so the engine checks it and
//     turns it into a similarity (gate/metric.go), for a Go caller's
//     Request as for a decoded one.
//   - bm25, rrf, boosted, graph and sparse (a learned-sparse retriever's
//     raw score) are non-negative by construction.
//   - rerank may be any number: cross-encoders return logits; the engine
//     checks it against rerank_scale and normalizes it where a signal
//     needs [0,1].
func scores(s *Scores, o jsonread.Obj) *Error {
	if err := o.Strict(scoreFields); err != nil {
		return err
	}
	var err *Error
	if s.Vector, s.HasVector, err = o.Num("vector", false); err != nil {
		return err
	}
	nonNeg := func(key string, x *float64, has *bool) *Error {
		var err *Error
		if *x, *has, err = o.Num(key, false); err != nil {
			return err
		}
		if *has && *x < 0 {
			return o.Fail(key, "must be >= 0")
		}
		return nil
	}
	if err := nonNeg("bm25", &s.BM25, &s.HasBM25); err != nil {
		return err
	}
	if s.Rerank, s.HasRerank, err = o.Num("rerank", false); err != nil {
		return err
	}
	if err := nonNeg("rrf", &s.RRF, &s.HasRRF); err != nil {
		return err
	}
	if err := nonNeg("boosted", &s.Boosted, &s.HasBoosted); err != nil {
		return err
	}
	if err := nonNeg("graph", &s.Graph, &s.HasGraph); err != nil {
		return err
	}
	return nonNeg("sparse", &s.Sparse, &s.HasSparse)
}

// embedding reads an embedding and checks its length: not empty, within
// max_embedding_dims, and equal to every other embedding in the request
// (query_embedding when present, else the first chunk embedding), because a
// cosine between vectors of different lengths is meaningless.
func (d *requestDecoder) embedding(a *jsonx.Value, at jsonread.Path) ([]float64, *Error) {
	n := a.Len()
	if n == 0 {
		return nil, errorf(CodeBadField, at.String(), "must not be empty")
	}
	if n > d.lim.MaxEmbeddingDims {
		return nil, limitError(at.String(), "has "+strconv.Itoa(n)+" dimensions", d.lim.MaxEmbeddingDims, "max_embedding_dims")
	}
	if d.dims == 0 {
		d.dims, d.dimsFrom = n, at.String()
	} else if n != d.dims {
		return nil, errorf(CodeBadField, at.String(), "has "+strconv.Itoa(n)+" dimensions but "+d.dimsFrom+" has "+strconv.Itoa(d.dims))
	}
	return jsonread.Numbers(a, at, CodeBadField, make([]float64, 0, n))
}
