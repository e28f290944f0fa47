// types.ts: the gate's request, decision and validation JSON as TypeScript
// types, field for field as docs/decision.md describes them (schema
// version 1). The module writes the decision; these types only describe it.

/**
 * How a request's vector scores were measured (docs/decision.md has each
 * vector store's). The gate turns each into a similarity: the cosine
 * family (cosine, cosine_distance, l2, l2_squared) exactly for unit-length
 * embeddings; dot and negative_dot (pgvector's <#>) are unbounded.
 */
export type VectorMetric = "cosine" | "dot" | "l2" | "l2_squared" | "cosine_distance" | "negative_dot";

/** What a request's rerank scores are. Without one, any score outside [0,1] makes them all logits. */
export type RerankScale = "probability" | "logit";

/** Retriever scores of one chunk. A score that is present is used even when it is 0. */
export interface Scores {
  /** The vector store's score, as the request's vector_metric says (default: a cosine similarity in [-1, 1]). */
  vector?: number;
  /** Raw BM25 (>= 0), saturated as bm25/(bm25+s) where a [0,1] value is needed. */
  bm25?: number;
  /** Reranker score: used as is when every rerank score is in [0,1], else as logits. */
  rerank?: number;
  /** Reciprocal-rank-fusion score (>= 0). */
  rrf?: number;
  /** A boosted retrieval score (>= 0). */
  boosted?: number;
  /** Graph support (> 0 means the chunk has graph support). */
  graph?: number;
  /** A learned-sparse retriever's raw score (SPLADE, ELSER, OpenSearch neural sparse): >= 0, unbounded. */
  sparse?: number;
}

/** The names of Scores, for options that choose one. */
export type ScoreName = keyof Scores;

/** One retrieved chunk, in retriever order. */
export interface Chunk {
  /** Chunk id; defaults to c1, c2... by position; unique within a list. */
  id?: string;
  /** Source document: shown in the prompt, used for diversity and merging. */
  doc_id?: string;
  title?: string;
  text?: string;
  scores?: Scores;
  /** RFC 3339, for freshness with the request's `now`. */
  updated_at?: string;
  /** Source trust in [0,1]; multiplies evidence. */
  trust?: number;
  /** Fenced in the prompt with the policy's warning. */
  untrusted?: boolean;
  /** Same length as the request's query_embedding. */
  embedding?: number[];
  /** Memory temperature (>= 0). */
  temperature?: number;
  /** Ignored by the gate. */
  metadata?: unknown;
}

/** A gate request: the question and what the retriever returned. */
export interface GateRequest {
  query: string;
  chunks?: Chunk[];
  /** Multi-query retrieval: one list per phrasing, the original first (not with chunks). */
  results_per_query?: Chunk[][];
  query_embedding?: number[];
  /** RFC 3339: the caller's clock, used only for freshness. */
  now?: string;
  /** How scores.vector were measured; default: the host's, else cosine. */
  vector_metric?: VectorMetric;
  /** What scores.rerank are; default: the host's, else by value. */
  rerank_scale?: RerankScale;
}

export type Action = "inject" | "caveat" | "fallback" | "refuse";
export type Level = "sufficient" | "partial" | "insufficient";

export type ChunkReason =
  | "kept"
  | "quality_below_threshold"
  | "quality_fallback_all_filtered"
  | "evidence_below_floor"
  | "relevance_below_threshold"
  | "relevance_fallback_all_filtered";

/** A chunk as the decision reports it. */
export interface DecisionChunk {
  id: string;
  doc_id: string;
  /** S1.. for kept chunks, "" for dropped ones. */
  tag: string;
  kept: boolean;
  reason: ChunkReason;
  /** The score of the policy's first applicable ordering, in [0,1]. */
  score: number;
  quality?: number;
  /** The vector score as the gate used it: the cosine, or for dot products the similarity on its own scale. */
  vector?: number;
  /** bm25 saturated to [0,1]. */
  bm25?: number;
  /** Raw RRF, when the evidence group ranked the chunk. */
  fused?: number;
}

export interface Prompt {
  /** For inject and caveat: the constrained prompt's instructions. */
  instructions: string;
  /** For inject and caveat: the <sources> block with the [S1].. tags. */
  sources: string;
  /** For fallback: the minimal prompt. */
  minimal: string;
}

export interface Refusal {
  type: "hard";
  message: string;
}

export interface GapChunk {
  id: string;
  doc_id: string;
  score: number;
}

export interface GapEvent {
  kind: "refusal_hard" | "low_confidence" | "refusal_soft" | string;
  query: string;
  query_embedding?: number[];
  confidence?: number;
  signals?: Record<string, number>;
  top_chunks?: GapChunk[];
}

/** Something about the request the gate decided despite (e.g. distances sent as cosines). */
export interface Warning {
  code: "scores_look_like_distances" | "scores_look_like_similarities" | "embeddings_not_unit_length" | string;
  message: string;
}

export interface PolicyRef {
  name: string;
  version: string;
  /** sha256 of the policy's canonical JSON. */
  sha256: string;
}

/** The gate's decision, in the module's field order. */
export interface Decision {
  action: Action;
  level: Level;
  confidence: number;
  band: string;
  interpretation: string;
  flag_for_review: boolean;
  query_type: "vector_fallback" | "vector_search" | "confidence_gated_fallback";
  signals: Record<string, number>;
  /** Kept chunks in score order (S1 first), then dropped chunks in input order. */
  chunks: DecisionChunk[];
  /** null for refuse. */
  prompt: Prompt | null;
  /** The policy's caveat for a caveat decision, else "". */
  caveat: string;
  /** Set for refuse, else null. */
  refusal: Refusal | null;
  missing_aspects: string[];
  confidence_factors: string[];
  recommendations: string[];
  /** The decision JSON leaves it out when empty; Gate.evaluate and the client give [] then. */
  warnings: Warning[];
  gap_event: GapEvent | null;
  policy: PolicyRef;
}

/** The answer check's input. */
export interface ValidateInput {
  answer: string;
  /** The tags the prompt offered (S1..). */
  tags: string[];
  /** For the gap event of a soft refusal. */
  query?: string;
}

/** The answer check's result. */
export interface Validation {
  /** The answer is the policy's refusal line. */
  soft_refusal: boolean;
  /** Offered tags the answer cites, in first-cited order. */
  cited: string[];
  /** Cited tags the prompt never offered. */
  unknown: string[];
  uncited_sentences: string[];
  gap_event: GapEvent | null;
}

/** What the module says about itself and its policy. */
export interface Description {
  version: string;
  schema_version: string;
  policy: PolicyRef;
}

/** The error JSON every host writes. */
export interface ErrorBody {
  error: { code: string; message: string; field: string };
}

/** A decision with the id the deciding host gave it (ctxgate serve gives one; the in-process gate does not). */
export interface GateResult {
  decision: Decision;
  decisionId?: string;
}

/**
 * Anything that decides a request: the in-process Gate and the
 * CtxgateClient of `ctxgate serve` both are. The LangChain and LlamaIndex
 * components take one.
 */
export interface Decider {
  decide(request: GateRequest): Promise<GateResult>;
}
