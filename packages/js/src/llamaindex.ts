// llamaindex.ts: the gate as a LlamaIndex.TS node postprocessor
// (BaseNodePostprocessor of @llamaindex/core: postprocessNodes(nodes,
// query)). It drops what the gate drops, orders the rest as the decision
// does (S1 first) and returns clones of the kept nodes whose
// metadata.ctxgate holds the verdict; the key is excluded from what the LLM
// and the embedder see, so it does not leak into prompts. Only types are
// imported, so any copy of @llamaindex/core (or llamaindex) works.

import type { BaseNodePostprocessor } from "@llamaindex/core/postprocessor";
import type { MessageContent } from "@llamaindex/core/llms";
import type { BaseNode, MetadataMode, NodeWithScore } from "@llamaindex/core/schema";
import { chunkFromMetadata, gateItems, withScore, type EvidenceOptions } from "./evidence.js";
import { llamaindexScoreConvention, type ScoreConvention } from "./stores.js";
import type { Chunk, Decision } from "./types.js";

export { CtxgateRefusal, type CtxgateMetadata, type DecisionEvent, type EvidenceOptions } from "./evidence.js";
export { llamaindexScoreConvention, type ScoreConvention } from "./stores.js";

export interface CtxgatePostprocessorOptions extends EvidenceOptions {
  /** The framework's score of a node (sent as scoreAs, default vector). Default: node.score. */
  score?: (node: NodeWithScore) => number | undefined;
  /** Replaces the whole mapping of a node to the gate's chunk. */
  chunk?: (node: NodeWithScore, index: number) => Chunk;
}

// MetadataMode.NONE, without importing the enum at run time.
const NONE = "NONE" as MetadataMode;

/** The default mapping of a NodeWithScore to a chunk: its text, id, source document and score (node.score, or score(n)). */
export function nodeChunk(n: NodeWithScore, scoreAs: EvidenceOptions["scoreAs"] = "vector", score?: (n: NodeWithScore) => number | undefined): Chunk {
  const node = n.node;
  const c = chunkFromMetadata(node.metadata as Record<string, unknown>);
  c.id = node.id_;
  c.text = node.getContent(NONE);
  const source = node.sourceNode?.nodeId;
  if (c.doc_id === undefined && source) c.doc_id = source;
  return withScore(c, score ? score(n) : n.score, scoreAs);
}

/** The query text of a MessageContent (its text parts, joined). */
export function queryText(query: MessageContent | undefined): string {
  if (query === undefined) return "";
  if (typeof query === "string") return query;
  return query.map((p) => (p.type === "text" ? p.text : "")).filter((t) => t).join("\n");
}

export class CtxgateNodePostprocessor implements BaseNodePostprocessor {
  readonly options: CtxgatePostprocessorOptions;
  /** The last decision made (with concurrent calls, whichever finished last: use onDecision to pair them). */
  lastDecision?: Decision;
  lastDecisionId?: string;

  /** What fromVectorStore read from the store, if anything. */
  scoreConvention?: ScoreConvention;

  constructor(options: CtxgatePostprocessorOptions) {
    this.options = options;
  }

  /**
   * A postprocessor for the nodes a LlamaIndex.TS vector store retrieves,
   * with the vector_metric its similarities are in, read from the store
   * where it says (llamaindexScoreConvention: SimpleVectorStore's and
   * PGVectorStore's cosines, Chroma's 1 - distance by the collection's
   * space, Qdrant's distance); it may ask the store's server, so it is
   * async. The vectorMetric option wins; a store that does not say gets
   * the gate's default (cosine similarity).
   */
  static async fromVectorStore(store: unknown, options: CtxgatePostprocessorOptions): Promise<CtxgateNodePostprocessor> {
    const o = { ...options };
    const convention = o.vectorMetric ? undefined : await llamaindexScoreConvention(store);
    if (convention) {
      o.vectorMetric = convention.vectorMetric;
      const toScore = convention.toScore;
      if (toScore && !o.score && (o.scoreAs ?? "vector") === "vector") {
        o.score = (n) => (n.score === undefined ? undefined : toScore(n.score));
      }
    }
    const p = new CtxgateNodePostprocessor(o);
    if (convention) p.scoreConvention = convention;
    return p;
  }

  async postprocessNodes(nodes: NodeWithScore[], query?: MessageContent): Promise<NodeWithScore[]> {
    const o = this.options;
    const map = o.chunk ?? ((n: NodeWithScore) => nodeChunk(n, o.scoreAs, o.score));
    const gated = await gateItems(o, queryText(query), nodes, map, this);
    return gated.kept.map(({ item, meta }) => {
      const node = item.node.clone() as BaseNode;
      node.metadata = { ...node.metadata, ctxgate: meta };
      for (const keys of [node.excludedLlmMetadataKeys, node.excludedEmbedMetadataKeys]) {
        if (!keys.includes("ctxgate")) keys.push("ctxgate");
      }
      const out: NodeWithScore = { node };
      if (item.score !== undefined) out.score = item.score;
      return out;
    });
  }
}
