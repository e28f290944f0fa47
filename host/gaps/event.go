// Package gaps turns knowledge-gap events (refusals, low-confidence answers,
// thumbs-down) into a ranked backlog of what the knowledge base lacks
// (the support-agent article): it clusters events by query similarity, counts them by kind,
// diagnoses each cluster's failure mode, and re-runs past queries against new
// retrieval results to verify a fix.
//
// This is host code: it may use encoding/json, time and maps, but everything it
// writes is deterministic (same input bytes, same output bytes).
package gaps

import (
	"time"
)

// Event kinds, as the core writes them in gap_event.kind.
const (
	KindRefusalHard   = "refusal_hard"
	KindRefusalSoft   = "refusal_soft"
	KindLowConfidence = "low_confidence"
	KindThumbsDown    = "thumbs_down"
)

// Event is one knowledge-gap event: the decision's gap_event object plus the
// envelope the server and CLI add (time, decision_id, policy).
type Event struct {
	Kind           string
	Query          string
	QueryEmbedding []float64 // nil when the request had none
	Confidence     float64
	HasConfidence  bool
	// Signals are kept by name; names the gate may add later are tolerated and
	// carried through untouched.
	Signals    map[string]float64
	TopChunks  []TopChunk
	Time       time.Time
	HasTime    bool
	DecisionID string
	Policy     PolicyRef
	// Line is the 1-based line of the event in its JSONL file (0 when the event
	// was built in code), so reports can point back at the raw data.
	Line int
}

// TopChunk is a chunk reference inside a gap event.
type TopChunk struct {
	ID    string  `json:"id"`
	DocID string  `json:"doc_id"`
	Score float64 `json:"score"`
}

// PolicyRef names the policy that decided.
type PolicyRef struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

// SourceCounts counts a cluster's events by kind (the article's sourceCounts).
type SourceCounts struct {
	RefusalHard   int `json:"refusal_hard"`
	RefusalSoft   int `json:"refusal_soft"`
	ThumbsDown    int `json:"thumbs_down"`
	LowConfidence int `json:"low_confidence"`
}

func (s *SourceCounts) add(kind string) {
	switch kind {
	case KindRefusalHard:
		s.RefusalHard++
	case KindRefusalSoft:
		s.RefusalSoft++
	case KindThumbsDown:
		s.ThumbsDown++
	case KindLowConfidence:
		s.LowConfidence++
	}
}

func validKind(k string) bool {
	switch k {
	case KindRefusalHard, KindRefusalSoft, KindLowConfidence, KindThumbsDown:
		return true
	}
	return false
}

// Signal returns the named signal and whether the event recorded it.
func (e *Event) Signal(name string) (float64, bool) {
	v, ok := e.Signals[name]
	return v, ok
}
