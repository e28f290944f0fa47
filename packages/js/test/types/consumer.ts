// consumer.ts: what a TypeScript user of the package writes, type-checked
// (strict, nodenext) by types.test.mjs against dist/*.d.ts through the
// package's own name, with the real @langchain/core and llamaindex types.
// Never run: it only has to compile.
import { Gate, CtxgateClient, CtxgateError, type Decision, type Decider, type GateRequest } from "@ctxgate/ctxgate";
import { CtxgateDocumentCompressor, CtxgateRetriever, CtxgateRefusal, type CtxgateMetadata } from "@ctxgate/ctxgate/langchain";
import { CtxgateNodePostprocessor } from "@ctxgate/ctxgate/llamaindex";
import { Document } from "@langchain/core/documents";
import { BaseDocumentCompressor } from "@langchain/core/retrievers/document_compressors";
import type { BaseRetriever } from "@langchain/core/retrievers";
import type { VectorStoreInterface } from "@langchain/core/vectorstores";
import { TextNode, type NodeWithScore } from "llamaindex";
import type { BaseNodePostprocessor } from "@llamaindex/core/postprocessor";

export async function use(store: VectorStoreInterface): Promise<string[]> {
  const gate = await Gate.create({ policy: "support-agent", maxInputBytes: 1 << 20 });
  const client = new CtxgateClient({ baseUrl: "http://127.0.0.1:8080" });
  const deciders: Decider[] = [gate, client];
  const req: GateRequest = { query: "q", chunks: [{ text: "t", scores: { vector: 0.5 } }], now: "2026-01-01T00:00:00Z" };
  const d: Decision = gate.evaluate(req);
  const action: "inject" | "caveat" | "fallback" | "refuse" = d.action;

  const compressor: BaseDocumentCompressor = new CtxgateDocumentCompressor({ decider: deciders[0]!, scoreAs: "rerank" });
  const retriever: BaseRetriever = CtxgateRetriever.fromVectorStore(store, { decider: client, k: 5, throwOnRefuse: true, onDecision: (e) => void e.decision.action });
  const docs = await compressor.compressDocuments([new Document({ pageContent: "x", metadata: { score: 0.9 } })], "q");
  const meta = docs[0]?.metadata.ctxgate as CtxgateMetadata | undefined;

  const post: BaseNodePostprocessor = new CtxgateNodePostprocessor({ decider: gate, request: () => ({ now: "2026-01-01T00:00:00Z" }) });
  const nodes: NodeWithScore[] = await post.postprocessNodes([{ node: new TextNode({ text: "x" }), score: 0.8 }], "q");
  try {
    await retriever.invoke("q");
  } catch (e) {
    if (e instanceof CtxgateRefusal) return [e.decision.refusal?.message ?? ""];
    if (e instanceof CtxgateError) return [e.code, e.field, String(e.status)];
  }
  return [action, meta?.tag ?? "", String(nodes.length)];
}
