// rag.mjs: the official OpenAI SDK pointed at ctxgate serve. The retrieved
// chunks travel in the request as "documents"; ctxgate decides what the
// model sees, and the answer carries the verdict (the X-Ctxgate-* headers,
// the sufficiency object, the caveat in the text).
//
//   bin/ctxgate serve --upstream https://api.openai.com/v1     # or examples/openai/upstream.mjs
//   OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=sk-... node examples/openai/rag.mjs
import OpenAI from "openai";

const client = new OpenAI({
  baseURL: process.env.OPENAI_BASE_URL ?? "http://127.0.0.1:8080/v1",
  apiKey: process.env.OPENAI_API_KEY ?? "sk-local",
  maxRetries: 0,
});
const model = process.env.OPENAI_MODEL ?? "gpt-4o-mini";

// What a retriever returned for the question: text and scores per chunk.
const documents = [
  {
    id: "kb-12#0", doc_id: "kb-12", title: "Reset your password",
    text: "To reset your password, open Settings, choose Security, then Reset password. A reset link is emailed to you and expires after 30 minutes.",
    scores: { vector: 0.86, bm25: 14.2, rerank: 0.91 },
  },
  {
    id: "kb-12#1", doc_id: "kb-12", title: "Reset your password",
    text: "If you do not receive the reset email within 5 minutes, check your spam folder or contact support.",
    scores: { vector: 0.79, bm25: 9.8, rerank: 0.74 },
  },
];

const { data, response } = await client.chat.completions
  .create({ model, messages: [{ role: "user", content: "How do I reset my password?" }], documents })
  .withResponse();
console.log(`action:      ${response.headers.get("x-ctxgate-action")} (${response.headers.get("x-ctxgate-level")})`);
console.log(`decision id: ${response.headers.get("x-ctxgate-decision-id")}`);
console.log(`sufficiency: ${JSON.stringify(data.sufficiency)}`);
console.log(`answer:      ${data.choices[0].message.content}`);

// Streamed: the same, token by token; the final chunk carries sufficiency.
const stream = await client.chat.completions.create({
  model, stream: true, messages: [{ role: "user", content: "How do I reset my password?" }], documents,
});
let text = "";
let sufficiency;
for await (const chunk of stream) {
  text += chunk.choices[0]?.delta?.content ?? "";
  sufficiency = chunk.sufficiency ?? sufficiency;
}
console.log(`streamed:    ${text} (${sufficiency?.level})`);

// Every other endpoint goes straight through to the upstream.
const models = [];
for await (const m of client.models.list()) models.push(m.id);
console.log(`models:      ${models.join(", ")}`);
