// evidence.ts: what the LangChain and LlamaIndex components share: turn a
// framework's retrieved items into the gate's chunks, decide, and keep the
// items the decision keeps, in its order (S1 first), each with the
// decision's verdict on it.

import type { Action, Chunk, ChunkReason, Decider, Decision, GateRequest, Level, RerankScale, ScoreName, VectorMetric } from "./types.js";

/** The verdict on one kept item, put on its metadata under `ctxgate`. */
export interface CtxgateMetadata {
  /** S1, S2...: the tag the constrained prompt and citations use. */
  tag: string;
  /** The gate's score of the chunk, in [0,1]. */
  score: number;
  reason: ChunkReason;
  action: Action;
  level: Level;
  confidence: number;
  /** The policy's caveat for a caveat decision, else "". */
  caveat: string;
  /** The server's decision id (client only), for feedback. */
  decisionId?: string;
  /** name@version of the deciding policy. */
  policy: string;
}

/** What the caller hears about every decision. */
export interface DecisionEvent {
  query: string;
  decision: Decision;
  decisionId?: string;
  /** How many items went in, and how many came out. */
  received: number;
  kept: number;
}

export interface EvidenceOptions {
  /** Decides: an in-process Gate, or a CtxgateClient for ctxgate serve. */
  decider: Decider;
  /** Which of the gate's scores the framework's score is (default "vector"; "none" sends none). */
  scoreAs?: ScoreName | "none";
  /**
   * How the vector scores were measured (the request's vector_metric):
   * the store's metric. fromVectorStore reads it from the store where the
   * store says it (stores.ts); this option wins. Unset: the gate's
   * default (the host's, else cosine).
   */
  vectorMetric?: VectorMetric;
  /** What the rerank scores are (the request's rerank_scale); unset: the gate's default. */
  rerankScale?: RerankScale;
  /** Request members beside query and chunks (query_embedding, now), per query. */
  request?: (query: string) => Omit<GateRequest, "query" | "chunks" | "results_per_query"> | Promise<Omit<GateRequest, "query" | "chunks" | "results_per_query">>;
  /** Called with every decision (before the items are returned). */
  onDecision?: (event: DecisionEvent) => void;
  /**
   * On refuse, throw a CtxgateRefusal (carrying the decision and its
   * message) instead of returning no items: a chain then stops before
   * the model is called, which is what a hard refusal means.
   */
  throwOnRefuse?: boolean;
}

/** A hard refusal, thrown when throwOnRefuse is set. */
export class CtxgateRefusal extends Error {
  readonly decision: Decision;
  readonly decisionId?: string;
  constructor(decision: Decision, decisionId?: string) {
    super(decision.refusal?.message ?? "refused");
    this.name = "CtxgateRefusal";
    this.decision = decision;
    if (decisionId !== undefined) this.decisionId = decisionId;
  }
}

/** Where a component keeps its last decision (lastDecision, lastDecisionId). */
export interface LastDecision {
  lastDecision?: Decision;
  lastDecisionId?: string;
}

export interface Gated<T> {
  decision: Decision;
  decisionId?: string;
  /** The kept items in the decision's order, each with its verdict. */
  kept: { item: T; meta: CtxgateMetadata }[];
}

/**
 * gateItems decides query over items (chunk(item, i) maps each one) and
 * returns the kept items. Refuse and fallback keep none: fallback means
 * the model answers without the context. The decision is recorded in
 * `into` (the component) before onDecision hears of it.
 */
export async function gateItems<T>(options: EvidenceOptions, query: string, items: readonly T[], chunk: (item: T, index: number) => Chunk, into: LastDecision): Promise<Gated<T>> {
  const chunks = items.map((item, i) => chunk(item, i));
  assignIds(chunks);
  // The score conventions first: a request option's own members win.
  const conventions: Partial<GateRequest> = {};
  if (options.vectorMetric) conventions.vector_metric = options.vectorMetric;
  if (options.rerankScale) conventions.rerank_scale = options.rerankScale;
  const extra = options.request ? await options.request(query) : {};
  const { decision, decisionId } = await options.decider.decide({ ...conventions, ...extra, query, chunks });
  const index = new Map(chunks.map((c, i) => [c.id!, i]));
  const kept: Gated<T>["kept"] = [];
  if (decision.action === "inject" || decision.action === "caveat") {
    for (const c of decision.chunks) {
      const i = index.get(c.id);
      if (!c.kept || i === undefined) continue;
      const meta: CtxgateMetadata = {
        tag: c.tag,
        score: c.score,
        reason: c.reason,
        action: decision.action,
        level: decision.level,
        confidence: decision.confidence,
        caveat: decision.caveat,
        policy: `${decision.policy.name}@${decision.policy.version}`,
      };
      if (decisionId) meta.decisionId = decisionId;
      kept.push({ item: items[i]!, meta });
    }
  }
  into.lastDecision = decision;
  if (decisionId) into.lastDecisionId = decisionId;
  else delete into.lastDecisionId;
  const event: DecisionEvent = { query, decision, received: items.length, kept: kept.length };
  if (decisionId) event.decisionId = decisionId;
  options.onDecision?.(event);
  if (decision.action === "refuse" && options.throwOnRefuse) throw new CtxgateRefusal(decision, decisionId);
  const out: Gated<T> = { decision, kept };
  if (decisionId) out.decisionId = decisionId;
  return out;
}

// assignIds gives every chunk an id the decision can be mapped back by: the
// items' own ids when all have one and they are unique (so the decision and
// its gap events name them), else c1, c2... by position for all.
function assignIds(chunks: Chunk[]): void {
  const seen = new Set<string>();
  const own = chunks.every((c) => typeof c.id === "string" && c.id !== "" && !seen.has(c.id) && seen.add(c.id));
  if (!own) chunks.forEach((c, i) => (c.id = `c${i + 1}`));
}

/** Sets scores[scoreAs] = score when the framework gave a finite score. */
export function withScore(chunk: Chunk, score: unknown, scoreAs: ScoreName | "none" = "vector"): Chunk {
  if (scoreAs === "none" || typeof score !== "number" || !Number.isFinite(score)) return chunk;
  chunk.scores = { ...chunk.scores, [scoreAs]: score };
  return chunk;
}

/** The chunk members a framework item's metadata may carry under their own names. */
export function chunkFromMetadata(metadata: Record<string, unknown> | undefined): Chunk {
  const m = metadata ?? {};
  const c: Chunk = {};
  const str = (k: string) => (typeof m[k] === "string" ? (m[k] as string) : undefined);
  const docId = str("doc_id") ?? str("source") ?? str("file_path") ?? str("file_name");
  if (docId !== undefined) c.doc_id = docId;
  if (str("title") !== undefined) c.title = str("title")!;
  if (str("updated_at") !== undefined) c.updated_at = str("updated_at")!;
  if (typeof m.trust === "number") c.trust = m.trust;
  if (typeof m.untrusted === "boolean") c.untrusted = m.untrusted;
  if (typeof m.temperature === "number") c.temperature = m.temperature;
  if (Array.isArray(m.embedding)) c.embedding = m.embedding as number[];
  if (m.scores && typeof m.scores === "object" && !Array.isArray(m.scores)) c.scores = { ...(m.scores as Chunk["scores"]) };
  return c;
}
