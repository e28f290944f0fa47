// stores.ts: what a vector store's scores are, read from the store itself,
// so the LangChain and LlamaIndex components tell the gate the right
// vector_metric without the user's help. Each store says it its own way
// (a space setting, a distance strategy, an index class, or a score its
// framework transforms), read here by duck typing: nothing is imported, so
// any copy of the frameworks works. docs/decision.md has the same table.

import type { VectorMetric } from "./types.js";

/** How a store's scores reach the gate. */
export interface ScoreConvention {
  /** The request's vector_metric. */
  vectorMetric: VectorMetric;
  /**
   * The framework's score as a value of vectorMetric, when the framework
   * reports another function of it (Elasticsearch's (1 + cos) / 2, a
   * store's 1 - distance).
   */
  toScore?: (score: number) => number;
  /** Where it was read, e.g. `chroma hnsw:space "cosine"`. */
  source: string;
}

type Rec = Record<string, unknown>;
const rec = (x: unknown): Rec | undefined => (x !== null && typeof x === "object" ? (x as Rec) : undefined);
const str = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined);
/** The name of x's class ("" for none). */
const className = (x: unknown): string => {
  const c = rec(x)?.constructor;
  return typeof c === "function" ? c.name : "";
};

/** One minus the score: a distance reported as 1 - distance, or 1 - dot reported as a distance. */
const oneMinus = (s: number) => 1 - s;

/** Chroma's space (hnsw:space in the metadata, or the collection's configuration), default l2. */
function chromaSpace(...holders: unknown[]): string {
  for (const h of holders) {
    const r = rec(h);
    const space = str(rec(r?.metadata)?.["hnsw:space"]) ?? str(r?.["hnsw:space"]) ??
      str(rec(rec(r?.configuration)?.hnsw)?.space) ?? str(rec(rec(r?.configuration)?.spann)?.space);
    if (space) return space;
  }
  return "l2";
}

/**
 * langchainScoreConvention reads what a LangChain.js vector store's
 * similaritySearchWithScore returns (by its _vectorstoreType()), or
 * undefined for a store that does not say:
 *
 * - memory (MemoryVectorStore): cosine similarity;
 * - chroma: the collection's hnsw:space: l2 (the default) squared l2,
 *   cosine the cosine distance, ip 1 - dot;
 * - faiss: IndexFlatL2 (FaissStore's) squared l2, IndexFlatIP the dot product;
 * - pgvector: distanceStrategy cosine (the default) the cosine distance
 *   (<=>), euclidean l2 (<->), innerProduct the negated dot product (<#>);
 *   with scoreNormalization "similarity", the store's similarities;
 * - hnswlib: args.space cosine the cosine distance, l2 squared l2, ip 1 - dot;
 * - qdrant: collectionConfig.vectors.distance (Cosine, the default; Dot; Euclid);
 * - pinecone: cosine, Pinecone's default metric (an index made with
 *   dotproduct or euclidean needs the vectorMetric option);
 * - weaviate: the distance, for Weaviate's default cosine distance;
 * - elasticsearch: _score by vectorSearchOptions.similarity (l2_norm,
 *   the default: 1 / (1 + d²); cosine and dot_product: (1 + cos) / 2;
 *   max_inner_product), turned back into the metric.
 */
export function langchainScoreConvention(store: unknown): ScoreConvention | undefined {
  const s = rec(store);
  const typeFn = s?._vectorstoreType;
  const type = typeof typeFn === "function" ? str((typeFn as () => unknown).call(store)) : undefined;
  switch (type) {
    case "memory":
      return { vectorMetric: "cosine", source: "memory: cosine similarity" };
    case "chroma": {
      const space = chromaSpace({ metadata: s?.collectionMetadata }, s?.collection);
      return chromaConvention(space, false);
    }
    case "faiss": {
      const index = s?._index === undefined ? "IndexFlatL2" : className(s._index);
      if (index === "IndexFlatL2") return { vectorMetric: "l2_squared", source: "faiss IndexFlatL2: squared l2 distance" };
      if (index === "IndexFlatIP") return { vectorMetric: "dot", source: "faiss IndexFlatIP: inner product" };
      return undefined;
    }
    case "pgvector": {
      const strategy = str(s?.distanceStrategy) ?? "cosine";
      const similarity = s?.scoreNormalization === "similarity";
      const source = `pgvector distanceStrategy "${strategy}"` + (similarity ? `, scoreNormalization "similarity"` : "");
      switch (strategy) {
        case "cosine":
          return similarity ? { vectorMetric: "cosine", toScore: (x) => 2 * x - 1, source } : { vectorMetric: "cosine_distance", source };
        case "euclidean":
          return similarity ? { vectorMetric: "l2", toScore: (x) => 1 / x - 1, source } : { vectorMetric: "l2", source };
        case "innerProduct":
          return similarity ? { vectorMetric: "dot", source } : { vectorMetric: "negative_dot", source };
      }
      return undefined;
    }
    case "hnswlib": {
      const space = str(rec(s?.args)?.space);
      const source = `hnswlib space "${space}"`;
      if (space === "cosine") return { vectorMetric: "cosine_distance", source };
      if (space === "l2") return { vectorMetric: "l2_squared", source };
      if (space === "ip") return { vectorMetric: "dot", toScore: oneMinus, source };
      return undefined;
    }
    case "qdrant":
      return qdrantConvention(str(rec(rec(s?.collectionConfig)?.vectors)?.distance) ?? "Cosine");
    case "pinecone":
      return { vectorMetric: "cosine", source: "pinecone: Pinecone's default metric, cosine (set vectorMetric for a dotproduct or euclidean index)" };
    case "weaviate":
      return { vectorMetric: "cosine_distance", source: "weaviate: distance, Weaviate's default cosine (set vectorMetric for dot or l2-squared)" };
    case "elasticsearch": {
      const sim = str(s?.similarity) ?? "l2_norm";
      const source = `elasticsearch similarity "${sim}": _score`;
      switch (sim) {
        case "l2_norm":
          return { vectorMetric: "l2_squared", toScore: (x) => 1 / x - 1, source };
        case "cosine":
        case "dot_product":
          return { vectorMetric: "cosine", toScore: (x) => 2 * x - 1, source };
        case "max_inner_product":
          return { vectorMetric: "dot", toScore: (x) => (x >= 1 ? x - 1 : 1 - 1 / x), source };
      }
      return undefined;
    }
  }
  return undefined;
}

/** A Chroma space's convention: the distance as Chroma reports it, or (oneMinus) as 1 - distance. */
function chromaConvention(space: string, oneMinusDistance: boolean): ScoreConvention | undefined {
  const source = `chroma hnsw:space "${space}"` + (oneMinusDistance ? ", reported as 1 - distance" : "");
  switch (space) {
    case "l2":
      return { vectorMetric: "l2_squared", ...(oneMinusDistance && { toScore: oneMinus }), source };
    case "cosine":
      return oneMinusDistance ? { vectorMetric: "cosine", source } : { vectorMetric: "cosine_distance", source };
    case "ip":
      return oneMinusDistance ? { vectorMetric: "dot", source } : { vectorMetric: "dot", toScore: oneMinus, source };
  }
  return undefined;
}

/** A Qdrant distance's convention: Qdrant reports the similarity, or for Euclid the distance. */
function qdrantConvention(distance: string): ScoreConvention | undefined {
  const source = `qdrant distance "${distance}"`;
  switch (distance) {
    case "Cosine":
      return { vectorMetric: "cosine", source };
    case "Dot":
      return { vectorMetric: "dot", source };
    case "Euclid":
      return { vectorMetric: "l2", source };
  }
  return undefined;
}

/**
 * llamaindexScoreConvention reads what a LlamaIndex.TS vector store's
 * query similarities are (by its class), or undefined for a store that
 * does not say. It may ask the store's server (Chroma's collection,
 * Qdrant's), so it is async:
 *
 * - SimpleVectorStore: cosine similarity;
 * - PGVectorStore (@llamaindex/postgres): 1 - the cosine distance, a cosine;
 * - ChromaVectorStore: 1 - the distance of the collection's hnsw:space;
 * - QdrantVectorStore: Qdrant's score for the collection's distance.
 */
export async function llamaindexScoreConvention(store: unknown): Promise<ScoreConvention | undefined> {
  const s = rec(store);
  switch (className(store)) {
    case "SimpleVectorStore":
      return { vectorMetric: "cosine", source: "SimpleVectorStore: cosine similarity" };
    case "PGVectorStore":
      return { vectorMetric: "cosine", source: "PGVectorStore: 1 - cosine distance" };
    case "ChromaVectorStore": {
      const get = s?.getCollection;
      const collection = typeof get === "function" ? await (get as () => Promise<unknown>).call(store) : undefined;
      return chromaConvention(chromaSpace(collection), true);
    }
    case "QdrantVectorStore": {
      const client = typeof s?.client === "function" ? rec((s.client as () => unknown).call(store)) : undefined;
      const get = client?.getCollection;
      if (typeof get !== "function") return undefined;
      const info = rec(await (get as (n: unknown) => Promise<unknown>).call(client, s?.collectionName));
      return qdrantConvention(str(rec(rec(rec(info?.config)?.params)?.vectors)?.distance) ?? "");
    }
  }
  return undefined;
}
