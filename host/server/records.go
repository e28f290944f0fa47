package server

import (
	"encoding/json"
	"hash/maphash"
	"sync"
	"time"

	"github.com/ctxgate/ctxgate/gate/jsonx"
)

// record is what the server remembers of one decision, so that a later
// thumbs-down or soft refusal can be logged as a gap event with the query,
// signals and top chunks that produced it. It holds no chunk text.
type record struct {
	query      string
	embedding  []byte // the request's query_embedding JSON array, nil when absent
	confidence string // as the decision wrote it
	signals    []byte // compact JSON object
	top        []topChunk
	policy     policyRef
	at         time.Time
}

type topChunk struct {
	ID    string
	DocID string
	Score json.Number
}

// newRecord keeps the decision's kept chunks (S1 first), at most 5, like the
// core's gap_event.top_chunks.
func newRecord(query string, embedding []byte, d *decisionView) *record {
	r := &record{query: query, embedding: embedding, confidence: d.confidenceRaw(), signals: d.Signals, policy: d.Policy, at: time.Now()}
	for _, c := range d.Chunks {
		if !c.Kept || len(r.top) == 5 {
			continue
		}
		r.top = append(r.top, topChunk{c.ID, c.DocID, c.Score})
	}
	return r
}

// appendGapEvent writes a gap_event object for r in the core's field order.
func (r *record) appendGapEvent(dst []byte, kind, comment string) []byte {
	dst = append(dst, `{"kind":`...)
	dst = jsonx.AppendString(dst, kind)
	dst = append(dst, `,"query":`...)
	dst = jsonx.AppendString(dst, r.query)
	if len(r.embedding) > 0 {
		dst = append(dst, `,"query_embedding":`...)
		dst = append(dst, r.embedding...)
	}
	dst = append(dst, `,"confidence":`...)
	dst = append(dst, r.confidence...)
	dst = append(dst, `,"signals":`...)
	if len(r.signals) > 0 {
		dst = append(dst, r.signals...)
	} else {
		dst = append(dst, "{}"...)
	}
	dst = append(dst, `,"top_chunks":[`...)
	for i, c := range r.top {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = jsonx.AppendString(dst, c.ID)
		dst = append(dst, `,"doc_id":`...)
		dst = jsonx.AppendString(dst, c.DocID)
		dst = append(dst, `,"score":`...)
		if c.Score == "" {
			dst = append(dst, '0')
		} else {
			dst = append(dst, c.Score...)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if comment != "" {
		dst = append(dst, `,"comment":`...)
		dst = jsonx.AppendString(dst, comment)
	}
	return append(dst, '}')
}

// records is a bounded map decision id -> record. It is split into shards,
// each with its own lock and its own ring of ids (the oldest is evicted), so
// concurrent requests rarely meet on one lock and none is global.
type records struct {
	seed   maphash.Seed
	shards []recordShard
}

type recordShard struct {
	mu   sync.Mutex
	m    map[string]*record
	ring []string
	next int
}

const recordShards = 32

func newRecords(capacity int) *records {
	per := max(1, (capacity+recordShards-1)/recordShards)
	rs := &records{seed: maphash.MakeSeed(), shards: make([]recordShard, recordShards)}
	for i := range rs.shards {
		rs.shards[i] = recordShard{m: make(map[string]*record, per), ring: make([]string, per)}
	}
	return rs
}

func (rs *records) shard(id string) *recordShard {
	return &rs.shards[maphash.String(rs.seed, id)%recordShards]
}

func (rs *records) put(id string, r *record) {
	s := rs.shard(id)
	s.mu.Lock()
	if old := s.ring[s.next]; old != "" {
		delete(s.m, old)
	}
	s.ring[s.next] = id
	s.next = (s.next + 1) % len(s.ring)
	s.m[id] = r
	s.mu.Unlock()
}

func (rs *records) get(id string) *record {
	s := rs.shard(id)
	s.mu.Lock()
	r := s.m[id]
	s.mu.Unlock()
	return r
}
