package server

import (
	"encoding/json"
	"hash/maphash"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ctxgate/ctxgate/gate"
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
	verdict    feedbackVerdict // the latest feedback (feedback.go), under the shard's lock
	gaps       gapKinds        // the gap events logged for the decision, under the shard's lock
}

// gapKinds are the gap events a remembered decision may log after it was
// decided, each at most once: however often a client reports it, one
// decision is one piece of evidence in the gap report.
type gapKinds uint8

const (
	gapRefusalSoft gapKinds = 1 << iota // POST /v1/validate, or the gateway's answer check
	gapThumbsDown                       // POST /v1/feedback with rating "down"
)

// firstGap marks kind logged for id's decision and returns its record when
// it is remembered and kind was not logged before; nil, false otherwise.
func (rs *records) firstGap(id string, kind gapKinds) (rec *record, first bool) {
	rs.withRecord(id, func(r *record) {
		if r != nil && r.gaps&kind == 0 {
			r.gaps |= kind
			rec, first = r, true
		}
	})
	return rec, first
}

type topChunk struct {
	ID    string
	DocID string
	Score json.Number
}

// newRecord keeps the decision's top five chunks by score, kept or not, as
// the core ranks gap_event.top_chunks: the decision lists kept chunks by
// score and then dropped ones in input order, so a stable sort by score
// gives the core's order (up to ties between a kept and a dropped chunk
// whose scores agree to six decimals, which the decision cannot tell apart).
func newRecord(query string, embedding []byte, d *decisionView) *record {
	r := &record{query: query, embedding: embedding, confidence: d.confidenceRaw(), signals: d.Signals, policy: d.Policy, at: time.Now()}
	idx := make([]int, len(d.Chunks))
	score := make([]float64, len(d.Chunks))
	for i, c := range d.Chunks {
		idx[i] = i
		score[i], _ = c.Score.Float64()
	}
	sort.SliceStable(idx, func(a, b int) bool { return score[idx[a]] > score[idx[b]] })
	for _, i := range idx[:min(5, len(idx))] {
		c := d.Chunks[i]
		r.top = append(r.top, topChunk{c.ID, c.DocID, c.Score})
	}
	return r
}

// gapEvent is r as the core's gap event of the given kind: the fields the
// core's gapEvent would have set for this decision, read back from the
// decision's and the request's JSON. The server writes it with the core's
// own encoder (gate.AppendGapEvent), so a thumbs-down event and a decision's
// gap_event have the same bytes for the same fields.
func (r *record) gapEvent(kind string) *gate.GapEvent {
	g := &gate.GapEvent{Kind: kind, Query: strings.TrimSpace(r.query)} // the core trims the query
	g.Confidence, _ = strconv.ParseFloat(r.confidence, 64)
	if v, err := jsonx.Parse(r.embedding, 2); err == nil && v.Kind() == jsonx.Array && v.Len() > 0 {
		g.QueryEmbedding = make([]float64, v.Len())
		for i := range g.QueryEmbedding {
			g.QueryEmbedding[i] = v.Index(i).Float()
		}
	}
	if v, err := jsonx.Parse(r.signals, 2); err == nil && v.Kind() == jsonx.Object {
		g.Signals = make([]gate.Signal, v.Len())
		for i := range g.Signals {
			g.Signals[i] = gate.Signal{Name: v.Key(i), Value: v.Member(i).Float()}
		}
	}
	for _, c := range r.top {
		score, _ := c.Score.Float64()
		g.TopChunks = append(g.TopChunks, gate.GapChunk{ID: c.ID, DocID: c.DocID, Score: score})
	}
	return g
}

// appendGapEvent writes r's gap event of the given kind, with the
// feedback's comment as one more member when there is one.
func (r *record) appendGapEvent(dst []byte, kind, comment string) []byte {
	dst = gate.AppendGapEvent(dst, r.gapEvent(kind))
	if comment == "" {
		return dst
	}
	dst = append(dst[:len(dst)-1], `,"comment":`...) // reopen the object
	dst = jsonx.AppendString(dst, comment)
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
