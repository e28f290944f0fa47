package wire

// The types in this file are the wire contract of the gate. Their JSON names
// are fixed by docs/decision.md and wit/ctxgate.wit; a test keeps the three in
// step. Field order here is the order the encoder writes, so that a decision is
// byte-identical in every build and every host.
//
// The json tags of Request, Chunk and Scores are the one declaration of the
// request's members: the decoders' field table is generated from them
// (gate/internal/fieldtab, go generate ./gate/internal/decode). A field
// without a tag (a presence flag, a value parsed from another field) is not
// a member.

// Request is what a host hands the gate: the question and what the retriever
// returned for it.
type Request struct {
	Query          string    `json:"query"`           // required, non-empty after trimming
	Chunks         []Chunk   `json:"chunks"`          // the retrieved evidence, in retriever order
	QueryEmbedding []float64 `json:"query_embedding"` // optional; enables semantic relevance
	// ResultsPerQuery holds multi-query retrieval: one result list
	// per phrasing, the original phrasing first. When present and Chunks is
	// empty, the gate merges them into Chunks.
	ResultsPerQuery [][]Chunk `json:"results_per_query"`
	// Now is the caller's clock (RFC 3339), used only for freshness. The gate
	// never reads a clock itself, so the same request always decides the same.
	Now    string `json:"now"`
	NowSec int64  `json:"-"` // Now parsed to Unix seconds; HasNow tells whether it was set
	HasNow bool   `json:"-"`
	// VectorMetric says how the chunks' scores.vector were measured: "" is
	// the engine's default (cosine unless the host sets another). The
	// engine turns every vector score into a similarity (metric.go).
	VectorMetric VectorMetric `json:"vector_metric"`
	// RerankScale says whether scores.rerank are probabilities or logits:
	// "" is the engine's default, else the rule by value (any rerank score
	// outside [0,1] makes them all logits).
	RerankScale RerankScale `json:"rerank_scale"`
}

// Chunk is one retrieved passage.
type Chunk struct {
	ID         string    `json:"id"`
	DocID      string    `json:"doc_id"`
	Title      string    `json:"title"`
	Text       string    `json:"text"`
	Scores     Scores    `json:"scores"`
	UpdatedAt  string    `json:"updated_at"` // RFC 3339; optional
	UpdatedSec int64     `json:"-"`
	HasUpdated bool      `json:"-"`
	Trust      float64   `json:"trust"` // source trust in [0,1]; HasTrust tells whether it was set
	HasTrust   bool      `json:"-"`
	Untrusted  bool      `json:"untrusted"` // fenced in the prompt with a warning
	Embedding  []float64 `json:"embedding"` // optional; must match len(QueryEmbedding)
	// Temperature is the sufficient-context document's memory "temperature" (defaults to the
	// policy's value when absent).
	Temperature    float64 `json:"temperature"`
	HasTemperature bool    `json:"-"`
}

// ChunkMetadata is the chunk member that may hold anything: the gate
// accepts it and ignores it (the decoders skip it).
const ChunkMetadata = "metadata"

// Scores are the retriever's numbers for one chunk. Each Has* flag records
// presence: a present 0.0 is a real score and must never fall through to the
// next field (the confidence-scoring code's truthiness-chain accident).
//
// Sparse is a learned-sparse retriever's raw score (SPLADE, Elastic ELSER,
// OpenSearch neural sparse): >= 0 and unbounded, on a scale of its own per
// model and corpus, like BM25's. It is a semantic score, so it stands in for
// Vector wherever a signal asks for the semantic retriever's score and the
// chunk has no vector score.
type Scores struct {
	Vector  float64 `json:"vector"`
	BM25    float64 `json:"bm25"`
	Rerank  float64 `json:"rerank"`
	RRF     float64 `json:"rrf"`
	Boosted float64 `json:"boosted"`
	Graph   float64 `json:"graph"`
	Sparse  float64 `json:"sparse"`

	HasVector, HasBM25, HasRerank, HasRRF, HasBoosted, HasGraph, HasSparse bool `json:"-"`
}

// Action is what the host should do with the evidence.
type Action string

const (
	ActionInject   Action = "inject"
	ActionCaveat   Action = "caveat"
	ActionFallback Action = "fallback"
	ActionRefuse   Action = "refuse"
)

// Level is the sufficiency level.
type Level string

const (
	LevelSufficient   Level = "sufficient"
	LevelPartial      Level = "partial"
	LevelInsufficient Level = "insufficient"
)

// Query types as the confidence-gating document names them.
const (
	QueryTypeVectorSearch   = "vector_search"
	QueryTypeGatedFallback  = "confidence_gated_fallback"
	QueryTypeVectorFallback = "vector_fallback"
)

// Decision is the gate's answer. JSON field names in comments.
type Decision struct {
	Action            Action         // action
	Level             Level          // level
	Confidence        float64        // confidence, in [0,1]
	Band              string         // band: the band label, e.g. "HIGH"
	Interpretation    string         // interpretation
	FlagForReview     bool           // flag_for_review
	QueryType         string         // query_type
	Signals           []Signal       // signals: {name: value}, in a fixed order
	RAGConfidence     *RAGConfidence // rag_confidence; left out unless the policy reports it
	Chunks            []ChunkOutcome // chunks
	Prompt            *Prompt        // prompt; nil for fallback without minimal prompt and for refuse
	Caveat            string         // caveat; "" when none
	Refusal           *Refusal       // refusal; nil unless action is refuse
	MissingAspects    []string       // missing_aspects
	ConfidenceFactors []string       // confidence_factors
	Recommendations   []string       // recommendations
	Warnings          []Warning      // warnings; left out of the JSON when empty
	GapEvent          *GapEvent      // gap_event; nil when the decision is not a gap
	Policy            PolicyRef      // policy
}

// Warning is something about the request the gate decided despite, such
// as vector scores that look like distances under a similarity metric: a
// stable code and a message saying what to change.
type Warning struct {
	Code    string // code
	Message string // message
}

// Signal is one named number. Signals are reported only when their inputs
// were present, in the order the engine computed them.
type Signal struct {
	Name  string
	Value float64
}

// RAGConfidence is the confidence-scoring document's retrieval confidence as its scorer's
// to_dict() reports it (signals.retrieval.rag_confidence): beside the
// normalized signals in [0,1] it gives the raw top score, gap and spread
// (a cross-encoder logit stays a logit when signals.retrieval.raw_scores
// is on), the consensus as a count and graph support as a boolean. Numbers
// are rounded to 3 decimals, as to_dict() rounds them; top score, gap and
// spread are >= 0, the others in [0,1]. The interpretation and flag follow
// the scorer's own thresholds (0.85, 0.70, 0.50; flag unless HIGH).
type RAGConfidence struct {
	OverallConfidence   float64 // overall_confidence
	TopScore            float64 // top_score
	ScoreGap            float64 // score_gap
	ScoreSpread         float64 // score_spread
	ConsensusCount      int     // consensus_count
	BM25DenseAgreement  float64 // bm25_dense_agreement
	RerankerImpact      float64 // reranker_impact
	GraphSupport        bool    // graph_support
	DocumentDiversity   float64 // document_diversity
	Interpretation      string  // interpretation
	ShouldFlagForReview bool    // should_flag_for_review
}

// ChunkOutcome is the per-chunk verdict, in confidence order (S1 first) for
// kept chunks, followed by dropped chunks in input order.
type ChunkOutcome struct {
	ID         string  // id
	DocID      string  // doc_id
	Tag        string  // tag: "S1".. for kept chunks, "" for dropped
	Kept       bool    // kept
	Reason     string  // reason: why kept or dropped, a stable token
	Score      float64 // score: the per-chunk confidence used for ordering
	Quality    float64 // quality: section quality
	HasQuality bool
	Vector     float64 // vector, bm25, fused: kept separate, not blended
	HasVector  bool
	BM25       float64
	HasBM25    bool
	Fused      float64 // fused: the RRF score
	HasFused   bool
}

// Prompt is the constrained prompt or the minimal fallback prompt.
type Prompt struct {
	Instructions string // instructions: the constraint lines joined by "\n"
	Sources      string // sources: the complete <sources>...</sources> block
	// Minimal is the fallback prompt, set only for fallback.
	Minimal string // minimal
}

// Refusal is a hard refusal: the host answers without calling the model.
type Refusal struct {
	Type    string // type: "hard"
	Message string // message
}

// GapEvent records a knowledge gap: what the knowledge base lacks.
type GapEvent struct {
	Kind           string     // kind: refusal_hard | refusal_soft | low_confidence | thumbs_down
	Query          string     // query
	QueryEmbedding []float64  // query_embedding, when the request had one
	Confidence     float64    // confidence
	Signals        []Signal   // signals
	TopChunks      []GapChunk // top_chunks: at most 5, in confidence order
}

// GapChunk is a chunk reference inside a gap event.
type GapChunk struct {
	ID    string  // id
	DocID string  // doc_id
	Score float64 // score
}

// PolicyRef names the policy that decided.
type PolicyRef struct {
	Name    string // name
	Version string // version
	SHA256  string // sha256 of the policy's canonical JSON bytes, hex
}

// Answer is the input of answer validation: the model's answer and the
// decision (or just its tags) it was generated from.
type Answer struct {
	Answer string   // answer
	Tags   []string // tags: the S# tags the prompt offered, e.g. ["S1","S2"]
	Query  string   // query: optional, the question, copied into a refusal_soft gap event
}

// Validation is the result of checking an answer after generation.
type Validation struct {
	SoftRefusal      bool      // soft_refusal: the answer is the policy's refusal line
	Cited            []string  // cited: known tags cited, in first-cited order
	Unknown          []string  // unknown: cited tags the prompt never offered
	UncitedSentences []string  // uncited_sentences: factual sentences with no tag
	GapEvent         *GapEvent // gap_event: refusal_soft when soft_refusal
}

// Limits bound what one request may hold. They come from the policy
// ("limits"), with defaults (docs/policy.md). Exceeding one is an error with
// code "limit" that names the field; nothing is silently truncated.
type Limits struct {
	MaxRequestBytes  int // whole request JSON
	MaxChunks        int // len(chunks), and each results_per_query list
	MaxQueries       int // len(results_per_query)
	MaxChunkBytes    int // len(chunks[i].text)
	MaxTotalBytes    int // sum of chunk text bytes
	MaxQueryBytes    int // len(query)
	MaxEmbeddingDims int // len(query_embedding), len(chunks[i].embedding)
	MaxDepth         int // JSON nesting depth
	// MaxDecisionBytes bounds the JSON one call writes: a decision (and
	// what Decide returns would encode to), or an answer's validation.
	MaxDecisionBytes int
}
