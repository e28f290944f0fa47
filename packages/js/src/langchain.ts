// langchain.ts: the gate as LangChain.js components. A document compressor
// (usable wherever LangChain takes a BaseDocumentCompressor, e.g.
// ContextualCompressionRetriever) and a retriever that wraps another. Both
// drop what the gate drops, order the rest as the decision does (S1 first),
// and put the verdict on each returned Document's metadata.ctxgate; the
// decision itself goes to onDecision and to lastDecision.

import { BaseDocumentCompressor } from "@langchain/core/retrievers/document_compressors";
import { BaseRetriever, type BaseRetrieverInput, type BaseRetrieverInterface } from "@langchain/core/retrievers";
import { Document, type DocumentInterface } from "@langchain/core/documents";
import type { Callbacks, CallbackManagerForRetrieverRun } from "@langchain/core/callbacks/manager";
import type { VectorStoreInterface } from "@langchain/core/vectorstores";
import { chunkFromMetadata, gateItems, withScore, type EvidenceOptions } from "./evidence.js";
import { langchainScoreConvention, type ScoreConvention } from "./stores.js";
import type { Chunk, Decision } from "./types.js";

export { CtxgateRefusal, type CtxgateMetadata, type DecisionEvent, type EvidenceOptions } from "./evidence.js";
export { langchainScoreConvention, type ScoreConvention } from "./stores.js";

export interface CtxgateCompressorOptions extends EvidenceOptions {
  /**
   * The framework's score of a document (sent as scoreAs, default vector).
   * Default: metadata.score. A reranker's metadata.relevanceScore goes to
   * scores.rerank, and a metadata.scores object in the gate's shape is sent
   * as it is.
   */
  score?: (doc: DocumentInterface) => number | undefined;
  /** Replaces the whole mapping of a Document to the gate's chunk. */
  chunk?: (doc: DocumentInterface, index: number) => Chunk;
}

/** The default mapping of a LangChain Document to a chunk. */
export function documentChunk(doc: DocumentInterface, options: Pick<CtxgateCompressorOptions, "score" | "scoreAs"> = {}): Chunk {
  const m = doc.metadata as Record<string, unknown> | undefined;
  const c = chunkFromMetadata(m);
  c.text = doc.pageContent;
  const id = doc.id ?? (typeof m?.id === "string" ? m.id : undefined);
  if (id !== undefined) c.id = id;
  const score = options.score ? options.score(doc) : m?.score;
  withScore(c, score, options.scoreAs);
  if (typeof m?.relevanceScore === "number" && c.scores?.rerank === undefined) withScore(c, m.relevanceScore, "rerank");
  return c;
}

/**
 * CtxgateDocumentCompressor gates retrieved Documents: refused or
 * fallback decisions return no documents (or throw CtxgateRefusal with
 * throwOnRefuse); otherwise the kept ones, in S1.. order, as new Documents
 * whose metadata.ctxgate holds {tag, score, reason, action, level,
 * confidence, caveat, policy, decisionId?}. The inputs are not modified.
 */
export class CtxgateDocumentCompressor extends BaseDocumentCompressor {
  readonly options: CtxgateCompressorOptions;
  /** The last decision made (with concurrent calls, whichever finished last: use onDecision to pair them). */
  lastDecision?: Decision;
  lastDecisionId?: string;

  constructor(options: CtxgateCompressorOptions) {
    super();
    this.options = options;
  }

  async compressDocuments(documents: DocumentInterface[], query: string, _callbacks?: Callbacks): Promise<DocumentInterface[]> {
    const o = this.options;
    const map = o.chunk ?? ((d: DocumentInterface) => documentChunk(d, o));
    const gated = await gateItems(o, query, documents, map, this);
    return gated.kept.map(({ item, meta }) => {
      const fields: ConstructorParameters<typeof Document>[0] = { pageContent: item.pageContent, metadata: { ...item.metadata, ctxgate: meta } };
      if (item.id !== undefined) fields.id = item.id;
      return new Document(fields);
    });
  }
}

export interface CtxgateRetrieverInput extends CtxgateCompressorOptions, BaseRetrieverInput {
  /** The retriever whose results are gated. */
  retriever: BaseRetrieverInterface;
}

/** CtxgateRetriever: another retriever's results, through CtxgateDocumentCompressor. */
export class CtxgateRetriever extends BaseRetriever {
  static lc_name() {
    return "CtxgateRetriever";
  }
  lc_namespace = ["ctxgate", "retrievers"];
  readonly retriever: BaseRetrieverInterface;
  readonly compressor: CtxgateDocumentCompressor;

  constructor(fields: CtxgateRetrieverInput) {
    super(fields);
    this.retriever = fields.retriever;
    this.compressor = new CtxgateDocumentCompressor(fields);
  }

  /** The last decision made. */
  get lastDecision(): Decision | undefined {
    return this.compressor.lastDecision;
  }

  get lastDecisionId(): string | undefined {
    return this.compressor.lastDecisionId;
  }

  async _getRelevantDocuments(query: string, runManager?: CallbackManagerForRetrieverRun): Promise<DocumentInterface[]> {
    const docs = await this.retriever.invoke(query, runManager?.getChild("base_retriever"));
    return this.compressor.compressDocuments(docs, query, runManager?.getChild("ctxgate"));
  }

  /**
   * A gated retriever over a vector store: the top k by
   * similaritySearchWithScore, each score sent as scoreAs (vector unless
   * said otherwise), with the vector_metric the store's scores are in,
   * read from the store where it says (langchainScoreConvention: Chroma's
   * space, PGVectorStore's distanceStrategy, FAISS's index, HNSWLib's
   * space, Qdrant's distance, Elasticsearch's similarity...). A store
   * that does not say gets the gate's default (cosine similarity) unless
   * the vectorMetric option says otherwise; the option always wins, and
   * the score option maps a score the gate cannot read as it is.
   */
  static fromVectorStore(store: VectorStoreInterface, options: Omit<CtxgateRetrieverInput, "retriever"> & { k?: number; filter?: VectorStoreInterface["FilterType"] }): CtxgateRetriever {
    const { k, filter, ...rest } = options;
    const convention = rest.vectorMetric ? undefined : langchainScoreConvention(store);
    if (convention) {
      rest.vectorMetric = convention.vectorMetric;
      const toScore = convention.toScore;
      if (toScore && !rest.score && (rest.scoreAs ?? "vector") === "vector") {
        rest.score = (doc) => {
          const s = (doc.metadata as Record<string, unknown> | undefined)?.score;
          return typeof s === "number" ? toScore(s) : undefined;
        };
      }
    }
    const r = new CtxgateRetriever({ ...rest, retriever: new ScoredVectorStoreRetriever(store, k ?? 4, filter) });
    if (convention) r.scoreConvention = convention;
    return r;
  }

  /** What fromVectorStore read from the store, if anything (undefined: the options', or the gate's default). */
  scoreConvention?: ScoreConvention;
}

// ScoredVectorStoreRetriever returns the store's top k with each score in
// metadata.score (LangChain's own VectorStoreRetriever drops the scores).
class ScoredVectorStoreRetriever extends BaseRetriever {
  static lc_name() {
    return "ScoredVectorStoreRetriever";
  }
  lc_namespace = ["ctxgate", "retrievers"];

  constructor(private readonly store: VectorStoreInterface, private readonly k: number, private readonly filter?: VectorStoreInterface["FilterType"]) {
    super();
  }

  async _getRelevantDocuments(query: string, runManager?: CallbackManagerForRetrieverRun): Promise<DocumentInterface[]> {
    const hits = await this.store.similaritySearchWithScore(query, this.k, this.filter, runManager?.getChild("vectorstore"));
    return hits.map(([doc, score]) => {
      const fields: ConstructorParameters<typeof Document>[0] = { pageContent: doc.pageContent, metadata: { ...doc.metadata, score } };
      if (doc.id !== undefined) fields.id = doc.id;
      return new Document(fields);
    });
  }
}
