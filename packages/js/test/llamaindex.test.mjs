// llamaindex.test.mjs: the LlamaIndex.TS node postprocessor against the
// real llamaindex package (the lockfile's version, with its
// @llamaindex/core): every golden case decided exactly as the gate does,
// kept nodes cloned (the originals untouched) in S order with the verdict
// on metadata the LLM never sees; and inside LlamaIndex's own
// VectorStoreIndex query engine, where the model sees only kept evidence
// and throwOnRefuse stops the query before the model is called.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  BaseEmbedding, Document, MetadataMode, NodeRelationship, Settings, SimilarityPostprocessor, TextNode, VectorStoreIndex,
} from "llamaindex";
import { BaseLLM } from "@llamaindex/core/llms";
import { CtxgateClient, Gate } from "../dist/index.js";
import { CtxgateNodePostprocessor, CtxgateRefusal, llamaindexScoreConvention, nodeChunk, queryText } from "../dist/llamaindex.js";
import { ANSWERABLE, KB, OFF_TOPIC, chunkCases, chunkMetadata, expectedKept, gatesByPolicy, startServe, wordVector } from "./helpers.mjs";

const gateFor = gatesByPolicy(Gate);
const nodesOf = (c) => c.chunks.map((ch) => ({ node: new TextNode({ id_: ch.id, text: ch.text ?? "", metadata: chunkMetadata(ch) }) }));
const kept = (nodes) => nodes.map((n) => ({ id: n.node.id_, tag: n.node.metadata.ctxgate.tag, score: n.node.metadata.ctxgate.score, reason: n.node.metadata.ctxgate.reason }));

test("every golden case through the postprocessor: the gate's decision, its kept nodes in S order", async () => {
  assert.ok(chunkCases.length >= 25);
  for (const c of chunkCases) {
    const post = new CtxgateNodePostprocessor({ decider: await gateFor(c.policy), request: () => c.extra });
    const input = nodesOf(c);
    const before = JSON.stringify(input);
    const out = await post.postprocessNodes(input, c.query);
    const name = `${c.policy}/${c.name}`;
    assert.deepEqual(post.lastDecision, c.decision, name);
    assert.deepEqual(kept(out), expectedKept(c.decision), name);
    assert.equal(JSON.stringify(input), before, `${name}: inputs modified`);
    for (const n of out) {
      const src = input.find((x) => x.node.id_ === n.node.id_).node;
      assert.notEqual(n.node, src, "a clone, not the retrieved node");
      assert.ok(n.node instanceof TextNode);
      assert.equal(n.node.getContent(MetadataMode.NONE), src.getContent(MetadataMode.NONE));
      // The verdict is metadata for the caller, not text for the model.
      assert.equal(n.node.getContent(MetadataMode.LLM), src.getContent(MetadataMode.LLM));
      assert.equal(n.node.getContent(MetadataMode.EMBED), src.getContent(MetadataMode.EMBED));
      assert.equal(n.node.metadata.ctxgate.action, c.decision.action);
    }
  }
});

test("scores: NodeWithScore.score as vector by default (scoreAs changes it); kept scores are preserved", async () => {
  const node = new TextNode({ id_: "n1", text: "t", metadata: { title: "T" } });
  node.relationships[NodeRelationship.SOURCE] = { nodeId: "doc-7", metadata: {} };
  assert.deepEqual(nodeChunk({ node, score: 0.7 }), { title: "T", id: "n1", text: "t", doc_id: "doc-7", scores: { vector: 0.7 } });
  assert.deepEqual(nodeChunk({ node, score: 0.7 }, "rerank").scores, { rerank: 0.7 });
  assert.equal(nodeChunk({ node }).scores, undefined);
  const c = chunkCases.find((x) => x.policy === "wikigr" && x.name === "inject_high_similarity");
  const input = c.chunks.map((ch) => ({ node: new TextNode({ id_: ch.id, text: ch.text, metadata: { doc_id: ch.doc_id, title: ch.title } }), score: ch.scores.vector }));
  const post = new CtxgateNodePostprocessor({ decider: await gateFor("wikigr") });
  const out = await post.postprocessNodes(input, c.query);
  assert.deepEqual(post.lastDecision, c.decision, "scores from NodeWithScore decide as the golden request's vector scores");
  for (const n of out) assert.equal(n.score, input.find((x) => x.node.id_ === n.node.id_).score);
});

test("the query as MessageContent parts", () => {
  assert.equal(queryText([{ type: "text", text: "a" }, { type: "image_url", image_url: { url: "x" } }, { type: "text", text: "b" }]), "a\nb");
  assert.equal(queryText("q"), "q");
  assert.equal(queryText(undefined), "");
});

// The bag-of-words embedder of helpers.mjs as a LlamaIndex embedding.
class WordEmbedding extends BaseEmbedding {
  async getTextEmbedding(t) {
    return wordVector(t);
  }
}

// An LLM that records the prompts it gets and answers citing [S1].
class RecordingLLM extends BaseLLM {
  metadata = { model: "recording", temperature: 0, topP: 1, contextWindow: 8192, tokenizer: undefined, structuredOutput: false };
  prompts = [];
  async chat({ messages, stream }) {
    this.prompts.push(messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n"));
    const message = { role: "assistant", content: "Open Settings and choose Security [S1]." };
    if (stream) {
      return (async function* () {
        yield { delta: message.content, raw: null };
      })();
    }
    return { message, raw: null };
  }
}

async function index() {
  Settings.embedModel = new WordEmbedding();
  return VectorStoreIndex.fromDocuments(KB.map(([doc_id, title, text]) => new Document({ text, metadata: { doc_id, title } })));
}

test("in LlamaIndex's query engine: the model sees only kept evidence; throwOnRefuse stops before it", async () => {
  const llm = new RecordingLLM();
  Settings.llm = llm;
  const idx = await index();
  const post = new CtxgateNodePostprocessor({ decider: await gateFor("default"), throwOnRefuse: true });
  // LlamaIndex's own postprocessor first: the gate composes with others.
  const engine = idx.asQueryEngine({ similarityTopK: 3, nodePostprocessors: [new SimilarityPostprocessor({ similarityCutoff: 0 }), post] });
  const res = await engine.query({ query: ANSWERABLE });
  assert.equal(res.toString(), "Open Settings and choose Security [S1].");
  const d = post.lastDecision;
  assert.ok(d.action === "inject" || d.action === "caveat");
  assert.equal(llm.prompts.length, 1);
  const keptIds = new Set(d.chunks.filter((c) => c.kept).map((c) => c.id));
  for (const n of res.sourceNodes) assert.ok(keptIds.has(n.node.id_));
  assert.ok(llm.prompts[0].includes(KB[0][2]));
  const dropped = d.chunks.filter((c) => !c.kept);
  assert.ok(dropped.length >= 1, "the gate dropped nothing: the test shows nothing");
  for (const c of dropped) {
    const text = KB.find(([doc]) => doc === c.doc_id)[2];
    assert.ok(!llm.prompts[0].includes(text), `dropped evidence reached the model: ${c.doc_id}`);
  }
  assert.ok(!llm.prompts[0].includes("ctxgate"), "the verdict leaked into the prompt");
  await assert.rejects(engine.query({ query: OFF_TOPIC }), (e) => e instanceof CtxgateRefusal && e.decision.action === "refuse");
  assert.equal(llm.prompts.length, 1, "the model was called after a refusal");
});

test("decided by ctxgate serve: the decision id on every kept node", async (t) => {
  const serve = await startServe();
  t.after(() => serve.stop());
  const client = new CtxgateClient({ baseUrl: serve.url });
  const c = chunkCases.find((x) => x.policy === "default" && x.name === "caveat");
  const events = [];
  const post = new CtxgateNodePostprocessor({ decider: client, onDecision: (e) => events.push(e) });
  const out = await post.postprocessNodes(nodesOf(c), [{ type: "text", text: c.query }]);
  assert.deepEqual(post.lastDecision, c.decision);
  assert.deepEqual(kept(out), expectedKept(c.decision));
  assert.equal(events[0].decisionId, post.lastDecisionId);
  for (const n of out) {
    assert.equal(n.node.metadata.ctxgate.decisionId, post.lastDecisionId);
    assert.equal(n.node.metadata.ctxgate.caveat, c.decision.caveat);
  }
});

// A Decider that records the requests it decides, over a real Gate.
function recording(gate) {
  const requests = [];
  return { requests, decide: (r) => (requests.push(r), gate.decide(r)) };
}

// The store's own setting: LlamaIndex's SimpleVectorStore runs for real;
// the others as @llamaindex/chroma, @llamaindex/postgres and
// @llamaindex/qdrant name their classes and ask their servers (not
// installed here, and no server runs here), with the answers those
// servers give.
test("llamaindexScoreConvention and fromVectorStore: the vector_metric of each store's similarities", async () => {
  const idx = await index();
  const simple = idx.vectorStores.TEXT ?? Object.values(idx.vectorStores)[0];
  const c = await llamaindexScoreConvention(simple);
  assert.equal(c?.vectorMetric, "cosine", `${simple?.constructor?.name}`);
  const named = (name, props) => Object.assign(new ({ [name]: class {} })[name](), props);
  const chroma = (metadata) => named("ChromaVectorStore", { getCollection: async () => ({ name: "c", metadata }) });
  for (const [store, metric, from, to] of [
    [chroma(undefined), "l2_squared", 0.25, 0.75],
    [chroma({ "hnsw:space": "cosine" }), "cosine"],
    [chroma({ "hnsw:space": "ip" }), "dot"],
    [named("PGVectorStore", {}), "cosine"],
    [named("QdrantVectorStore", { collectionName: "q", client: () => ({ getCollection: async (n) => ({ config: { params: { vectors: { size: 3, distance: n === "q" ? "Dot" : "?" } } } }) }) }), "dot"],
  ]) {
    const got = await llamaindexScoreConvention(store);
    assert.equal(got?.vectorMetric, metric, got?.source);
    if (from !== undefined) assert.equal(got.toScore(from), to);
    else assert.equal(got.toScore, undefined);
  }
  assert.equal(await llamaindexScoreConvention({}), undefined);

  // fromVectorStore: Chroma's 1 - squared distance goes to the gate as the
  // squared distance, and decides as the cosines would.
  const gate = await gateFor("default");
  const rec = recording(gate);
  const post = await CtxgateNodePostprocessor.fromVectorStore(chroma(undefined), { decider: rec });
  assert.equal(post.scoreConvention.vectorMetric, "l2_squared");
  const g = chunkCases.find((x) => x.policy === "default" && x.name === "inject");
  const nodes = (score) => g.chunks.map((ch) => ({ node: new TextNode({ id_: ch.id, text: ch.text, metadata: { doc_id: ch.doc_id, title: ch.title } }), score: score(ch.scores.vector) }));
  await post.postprocessNodes(nodes((cos) => 1 - (2 - 2 * cos)), g.query);
  assert.equal(rec.requests[0].vector_metric, "l2_squared");
  assert.ok(Math.abs(rec.requests[0].chunks[0].scores.vector - (2 - 2 * g.chunks[0].scores.vector)) < 1e-12);
  const asCosines = new CtxgateNodePostprocessor({ decider: gate });
  await asCosines.postprocessNodes(nodes((cos) => cos), g.query);
  assert.equal(post.lastDecision.action, asCosines.lastDecision.action);
  assert.ok(Math.abs(post.lastDecision.confidence - asCosines.lastDecision.confidence) <= 1e-5);
  // The option wins.
  const stated = await CtxgateNodePostprocessor.fromVectorStore(chroma(undefined), { decider: rec, vectorMetric: "cosine" });
  assert.equal(stated.scoreConvention, undefined);
});
