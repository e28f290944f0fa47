// langchain.test.mjs: the LangChain.js components against the real
// @langchain/core (the lockfile's version): the compressor decides every
// golden case exactly as the gate does and returns the kept Documents in
// S order with the verdict on their metadata; the retriever wraps real
// LangChain retrievers and vector stores and works inside an LCEL chain,
// where throwOnRefuse stops the chain before the model is called; and the
// decision can come from ctxgate serve (with its decision id).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Document } from "@langchain/core/documents";
import { Embeddings } from "@langchain/core/embeddings";
import { BaseDocumentCompressor } from "@langchain/core/retrievers/document_compressors";
import { BaseRetriever } from "@langchain/core/retrievers";
import { RunnableLambda, RunnableSequence } from "@langchain/core/runnables";
import { ChatPromptTemplate } from "@langchain/core/prompts";
import { StringOutputParser } from "@langchain/core/output_parsers";
import { FakeListChatModel, FakeRetriever, FakeVectorStore } from "@langchain/core/utils/testing";
import { BadRequestError, CtxgateClient, Gate } from "../dist/index.js";
import { CtxgateDocumentCompressor, CtxgateRefusal, CtxgateRetriever, documentChunk, langchainScoreConvention } from "../dist/langchain.js";
import { ANSWERABLE, KB, OFF_TOPIC, chunkCases, chunkMetadata, expectedKept, gatesByPolicy, startServe, wordVector } from "./helpers.mjs";

const gateFor = gatesByPolicy(Gate);
const docsOf = (c) => c.chunks.map((ch) => new Document({ id: ch.id, pageContent: ch.text ?? "", metadata: chunkMetadata(ch) }));
const kept = (docs) => docs.map((d) => ({ id: d.id, tag: d.metadata.ctxgate.tag, score: d.metadata.ctxgate.score, reason: d.metadata.ctxgate.reason }));

test("the compressor is a BaseDocumentCompressor, the retriever a BaseRetriever", async () => {
  const gate = await gateFor("default");
  assert.ok(BaseDocumentCompressor.isBaseDocumentCompressor(new CtxgateDocumentCompressor({ decider: gate })));
  assert.ok(new CtxgateRetriever({ decider: gate, retriever: new FakeRetriever({ output: [] }) }) instanceof BaseRetriever);
});

test("every golden case through the compressor: the gate's decision, its kept documents in S order", async () => {
  assert.ok(chunkCases.length >= 25);
  for (const c of chunkCases) {
    const events = [];
    const compressor = new CtxgateDocumentCompressor({
      decider: await gateFor(c.policy),
      request: () => c.extra,
      onDecision: (e) => events.push(e),
    });
    const input = docsOf(c);
    const before = JSON.stringify(input);
    const out = await compressor.compressDocuments(input, c.query);
    const name = `${c.policy}/${c.name}`;
    assert.deepEqual(compressor.lastDecision, c.decision, name);
    assert.deepEqual(kept(out), expectedKept(c.decision), name);
    assert.equal(events.length, 1);
    assert.deepEqual(events[0].decision, c.decision);
    assert.equal(events[0].kept, out.length);
    assert.equal(JSON.stringify(input), before, `${name}: inputs modified`);
    for (const d of out) {
      const src = input.find((x) => x.id === d.id);
      assert.ok(d instanceof Document);
      assert.equal(d.pageContent, src.pageContent);
      const { ctxgate, ...rest } = d.metadata;
      assert.deepEqual(rest, src.metadata);
      assert.equal(ctxgate.action, c.decision.action);
      assert.equal(ctxgate.caveat, c.decision.caveat);
      assert.equal(ctxgate.confidence, c.decision.confidence);
      assert.equal(ctxgate.policy, `${c.policy}@${c.decision.policy.version}`);
    }
  }
});

test("score mapping: metadata.score as vector by default, scoreAs and score() configurable", () => {
  const d = new Document({ pageContent: "t", metadata: { score: 0.8, relevanceScore: 0.9, source: "kb/a", title: "A" } });
  assert.deepEqual(documentChunk(d), { doc_id: "kb/a", title: "A", text: "t", scores: { vector: 0.8, rerank: 0.9 } });
  assert.deepEqual(documentChunk(d, { scoreAs: "bm25" }).scores, { bm25: 0.8, rerank: 0.9 });
  assert.deepEqual(documentChunk(d, { scoreAs: "none" }).scores, { rerank: 0.9 });
  assert.deepEqual(documentChunk(d, { score: (x) => 1 - x.metadata.score }).scores.vector, 1 - 0.8);
});

test("documents without ids, or with repeated ids, are mapped back by position", async () => {
  const c = chunkCases.find((x) => x.policy === "default" && x.name === "inject");
  const compressor = new CtxgateDocumentCompressor({ decider: await gateFor("default") });
  for (const ids of [[undefined, undefined, undefined], ["a", "a", "b"]]) {
    const docs = c.chunks.map((ch, i) => new Document({ id: ids[i], pageContent: ch.text, metadata: chunkMetadata(ch) }));
    const out = await compressor.compressDocuments(docs, c.query);
    assert.equal(out.length, 1);
    assert.equal(out[0].pageContent, c.chunks[0].text);
    assert.equal(out[0].metadata.ctxgate.tag, "S1");
  }
});

test("a bad score is the gate's error, naming the chunk", async () => {
  const compressor = new CtxgateDocumentCompressor({ decider: await gateFor("default") });
  const docs = [new Document({ pageContent: "a", metadata: { score: 0.5 } }), new Document({ pageContent: "b", metadata: { score: 3 } })];
  await assert.rejects(compressor.compressDocuments(docs, "q"), (e) => e instanceof BadRequestError && e.field === "chunks[1].scores.vector");
});

// The bag-of-words embedder of helpers.mjs as LangChain Embeddings.
class WordEmbeddings extends Embeddings {
  constructor() {
    super({});
  }
  async embedDocuments(ts) {
    return ts.map(wordVector);
  }
  async embedQuery(t) {
    return wordVector(t);
  }
}

async function store() {
  const vs = new FakeVectorStore(new WordEmbeddings());
  await vs.addDocuments(KB.map(([source, title, text]) => new Document({ pageContent: text, metadata: { source, title } })));
  return vs;
}

test("fromVectorStore: the store's similarities decide; an answerable question keeps its evidence", async () => {
  const gate = await gateFor("default");
  const retriever = CtxgateRetriever.fromVectorStore(await store(), { decider: gate, k: 3 });
  const docs = await retriever.invoke(ANSWERABLE);
  const d = retriever.lastDecision;
  assert.ok(d.action === "inject" || d.action === "caveat", JSON.stringify(d).slice(0, 300));
  assert.equal(docs.length, d.chunks.filter((c) => c.kept).length);
  assert.ok(d.chunks.some((c) => !c.kept), "the gate dropped nothing: the test shows nothing");
  assert.equal(docs[0].metadata.source, "kb/security");
  assert.equal(docs[0].pageContent, KB[0][2]);
  assert.equal(docs[0].metadata.ctxgate.tag, "S1");
  // The store's score went to the gate as the vector score.
  const top = d.chunks.find((c) => c.tag === "S1");
  assert.equal(top.vector, Number(docs[0].metadata.score.toFixed(6)));
  const off = await retriever.invoke(OFF_TOPIC);
  assert.equal(retriever.lastDecision.action, "refuse");
  assert.deepEqual(off, []);
});

test("in an LCEL chain: throwOnRefuse stops before the model; otherwise the model sees only kept, tagged sources", async () => {
  const gate = await gateFor("default");
  const vs = await store();
  const model = new FakeListChatModel({ responses: ["Open Settings, choose Security [S1]."] });
  let modelCalls = 0;
  const counted = RunnableLambda.from(async (p) => {
    modelCalls++;
    return model.invoke(p);
  });
  const prompt = ChatPromptTemplate.fromMessages([
    ["system", "Answer from the sources only, citing [S#].\n{sources}"],
    ["human", "{question}"],
  ]);
  const format = (docs) => docs.map((d) => `[${d.metadata.ctxgate.tag}] ${d.pageContent}`).join("\n");
  const seen = [];
  const retriever = CtxgateRetriever.fromVectorStore(vs, { decider: gate, k: 3, throwOnRefuse: true });
  const chain = RunnableSequence.from([
    { sources: retriever.pipe(RunnableLambda.from((docs) => (seen.push(docs), format(docs)))), question: (q) => q },
    prompt,
    counted,
    new StringOutputParser(),
  ]);
  assert.equal(await chain.invoke(ANSWERABLE), "Open Settings, choose Security [S1].");
  assert.equal(modelCalls, 1);
  assert.deepEqual(seen[0].map((d) => d.metadata.ctxgate.tag), retriever.lastDecision.chunks.filter((c) => c.kept).map((c) => c.tag));
  assert.ok(seen[0].length < 3, "every retrieved document reached the model");
  await assert.rejects(chain.invoke(OFF_TOPIC), (e) =>
    e instanceof CtxgateRefusal && e.decision.action === "refuse" && e.message === e.decision.refusal.message);
  assert.equal(modelCalls, 1, "the model was called after a refusal");
});

test("a CtxgateRetriever over any retriever, decided by ctxgate serve: the decision id reaches the documents", async (t) => {
  const serve = await startServe();
  t.after(() => serve.stop());
  const client = new CtxgateClient({ baseUrl: serve.url });
  const c = chunkCases.find((x) => x.policy === "default" && x.name === "caveat");
  const retriever = new CtxgateRetriever({ decider: client, retriever: new FakeRetriever({ output: docsOf(c) }) });
  const docs = await retriever.invoke(c.query);
  assert.deepEqual(retriever.lastDecision, c.decision);
  assert.deepEqual(kept(docs), expectedKept(c.decision));
  assert.ok(retriever.lastDecisionId);
  for (const d of docs) assert.equal(d.metadata.ctxgate.decisionId, retriever.lastDecisionId);
  // The id is good for feedback.
  assert.equal((await client.feedback(retriever.lastDecisionId, "down")).decision_id, retriever.lastDecisionId);
});

// Each store's own setting, as the store classes of @langchain/community
// 1.1.29, @langchain/qdrant, @langchain/pinecone and @langchain/weaviate
// hold it (their constructors keep these properties; those packages are
// not installed here: they bring 147 more packages, a second zod and an
// openai that wants Node 22). MemoryVectorStore is core's own, run for real.
test("langchainScoreConvention: the vector_metric each store's scores are in", async () => {
  const as = (type, props) => Object.assign({ _vectorstoreType: () => type }, props);
  const cases = [
    [await store(), "cosine", []],
    [as("chroma", {}), "l2_squared", []],
    [as("chroma", { collectionMetadata: { "hnsw:space": "cosine" } }), "cosine_distance", []],
    [as("chroma", { collection: { metadata: { "hnsw:space": "ip" } } }), "dot", [[0.25, 0.75]]],
    [as("chroma", { collection: { configuration: { hnsw: { space: "cosine" } } } }), "cosine_distance", []],
    [as("faiss", {}), "l2_squared", []],
    [as("faiss", { _index: new (class IndexFlatIP {})() }), "dot", []],
    [as("pgvector", { distanceStrategy: "cosine", scoreNormalization: "distance" }), "cosine_distance", []],
    [as("pgvector", { distanceStrategy: "euclidean", scoreNormalization: "distance" }), "l2", []],
    [as("pgvector", { distanceStrategy: "innerProduct", scoreNormalization: "distance" }), "negative_dot", []],
    [as("pgvector", { distanceStrategy: "cosine", scoreNormalization: "similarity" }), "cosine", [[0.9, 0.8]]],
    [as("pgvector", { distanceStrategy: "euclidean", scoreNormalization: "similarity" }), "l2", [[0.5, 1]]],
    [as("hnswlib", { args: { space: "cosine" } }), "cosine_distance", []],
    [as("hnswlib", { args: { space: "l2" } }), "l2_squared", []],
    [as("hnswlib", { args: { space: "ip" } }), "dot", [[0.1, 0.9]]],
    [as("qdrant", {}), "cosine", []],
    [as("qdrant", { collectionConfig: { vectors: { size: 3, distance: "Dot" } } }), "dot", []],
    [as("qdrant", { collectionConfig: { vectors: { size: 3, distance: "Euclid" } } }), "l2", []],
    [as("pinecone", {}), "cosine", []],
    [as("weaviate", {}), "cosine_distance", []],
    [as("elasticsearch", { similarity: "l2_norm" }), "l2_squared", [[0.5, 1], [1, 0]]],
    [as("elasticsearch", { similarity: "cosine" }), "cosine", [[0.95, 0.9]]],
    [as("elasticsearch", { similarity: "dot_product" }), "cosine", [[0.5, 0]]],
    [as("elasticsearch", { similarity: "max_inner_product" }), "dot", [[96, 95], [0.5, -1]]],
  ];
  for (const [s, metric, conversions] of cases) {
    const c = langchainScoreConvention(s);
    assert.equal(c?.vectorMetric, metric, `${s._vectorstoreType()} ${JSON.stringify(s)}`);
    assert.ok(c.source.length > 0);
    for (const [from, to] of conversions) assert.ok(Math.abs(c.toScore(from) - to) < 1e-12, `${c.source}: ${from} -> ${c.toScore(from)}, want ${to}`);
    if (conversions.length === 0) assert.equal(c.toScore, undefined, c.source);
  }
  for (const s of [{}, as("faiss", { _index: new (class IndexHNSWFlat {})() }), as("qdrant", { collectionConfig: { vectors: { distance: "Manhattan" } } }), as("redis", {})]) {
    assert.equal(langchainScoreConvention(s), undefined);
  }
});

// A Decider that records the requests it decides, over a real Gate.
function recording(gate) {
  const requests = [];
  return { requests, decide: (r) => (requests.push(r), gate.decide(r)) };
}

test("fromVectorStore tells the gate the store's metric; the option and the request's own win", async () => {
  const gate = await gateFor("default");
  const rec = recording(gate);
  const retriever = CtxgateRetriever.fromVectorStore(await store(), { decider: rec, k: 3 });
  assert.equal(retriever.scoreConvention.vectorMetric, "cosine");
  await retriever.invoke(ANSWERABLE);
  assert.equal(rec.requests[0].vector_metric, "cosine");
  const stated = CtxgateRetriever.fromVectorStore(await store(), { decider: rec, k: 3, vectorMetric: "dot", request: () => ({ vector_metric: "cosine" }) });
  assert.equal(stated.scoreConvention, undefined);
  await stated.invoke(ANSWERABLE);
  assert.equal(rec.requests[1].vector_metric, "cosine", "the request option's member wins over vectorMetric");
});

test("distances given as what they are decide as their cosines; given as cosines they are a warning", async () => {
  const gate = await gateFor("default");
  const c = chunkCases.find((x) => x.policy === "default" && x.name === "inject");
  const docs = (score) => c.chunks.map((ch) => new Document({ id: ch.id, pageContent: ch.text, metadata: { doc_id: ch.doc_id, title: ch.title, score: score(ch.scores.vector) } }));
  const asCosines = new CtxgateDocumentCompressor({ decider: gate });
  await asCosines.compressDocuments(docs((s) => s), c.query);
  const asL2 = new CtxgateDocumentCompressor({ decider: gate, vectorMetric: "l2_squared" });
  await asL2.compressDocuments(docs((s) => 2 - 2 * s), c.query);
  assert.equal(asL2.lastDecision.action, asCosines.lastDecision.action);
  assert.ok(Math.abs(asL2.lastDecision.confidence - asCosines.lastDecision.confidence) <= 1e-5);
  assert.deepEqual(asL2.lastDecision.warnings, []);
  // Squared distances of three chunks, closest first, sent as cosines.
  const d3 = [0.3, 0.6, 0.9].map((d, i) => new Document({ id: `d${i}`, pageContent: c.chunks[i % 2].text, metadata: { score: d } }));
  const wrong = new CtxgateDocumentCompressor({ decider: gate });
  await wrong.compressDocuments(d3, c.query);
  assert.deepEqual(wrong.lastDecision.warnings.map((w) => w.code), ["scores_look_like_distances"]);
});
