// gateway.test.mjs: the official OpenAI Node SDK (openai, pinned in
// examples/openai/package-lock.json) against a real `ctxgate serve
// --upstream`, with upstream.mjs as the model: chat (plain and streamed)
// for each of the gate's answers, the Responses API, models, embeddings,
// other endpoints passed through, the SDKs' /v1 base-URL form for the
// upstream, fail-open, and the gateway's errors as the SDK's typed errors.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import OpenAI, { APIError, InternalServerError, UnprocessableEntityError } from "openai";
import { startServe, root } from "../../../packages/js/test/helpers.mjs";
import { ANSWER, MODELS, embed, startUpstream } from "../upstream.mjs";

const here = dirname(fileURLToPath(import.meta.url));

/** A golden gate request as a chat body's parts: the question and the chunks as documents. */
function golden(name) {
  const { query, chunks } = JSON.parse(readFileSync(resolve(root, "testdata/requests/default", `${name}.json`), "utf8"));
  return { query, documents: chunks };
}
const INJECT = golden("inject");
const CAVEAT = golden("caveat");
const REFUSE = golden("refuse_off_topic");

let up, serve, serveV1, openServe, client, clientV1, decisions;

/** The decision POST /v1/gate gives for a golden request (the caveat text, the refusal line). */
async function decide(g) {
  const r = await fetch(`${serve.url}/v1/gate`, { method: "POST", body: JSON.stringify({ query: g.query, chunks: g.documents }) });
  return r.json();
}

const sdk = (url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: "sk-test", maxRetries: 0, timeout: 20000 });
const messages = (g) => [{ role: "system", content: "You are the support bot." }, { role: "user", content: g.query }];
const lastTo = (path) => up.requests.filter((r) => r.path === path).at(-1);

before(async () => {
  up = await startUpstream();
  // The upstream in both base-URL forms: without /v1, and the SDKs' own form with it.
  serve = await startServe(["--upstream", up.url, "--access-log", "off"]);
  serveV1 = await startServe(["--upstream", `${up.url}/v1`, "--access-log", "off"]);
  openServe = await startServe(["--upstream", `${up.url}/v1`, "--fail-open", "--access-log", "off"]);
  client = sdk(serve.url);
  clientV1 = sdk(serveV1.url);
  decisions = { caveat: await decide(CAVEAT), refuse: await decide(REFUSE) };
  assert.equal(decisions.caveat.action, "caveat");
  assert.equal(decisions.refuse.action, "refuse");
});
after(async () => {
  await Promise.all([serve?.stop(), serveV1?.stop(), openServe?.stop()]);
  await up?.close();
});

test("chat: inject, the answer relayed with the verdict in headers and sufficiency", async () => {
  const { data, response } = await client.chat.completions
    .create({ model: "fake-chat-1", messages: messages(INJECT), documents: INJECT.documents, temperature: 0 })
    .withResponse();
  assert.equal(data.choices[0].message.content, ANSWER);
  assert.match(data.id, /^chatcmpl-up-/);
  assert.equal(response.headers.get("x-ctxgate-action"), "inject");
  assert.equal(response.headers.get("x-ctxgate-answer-check"), "ok");
  assert.match(response.headers.get("x-ctxgate-decision-id"), /\S/);
  assert.equal(data.sufficiency.level, "sufficient");
  assert.equal(typeof data.sufficiency.score, "number");
  // What the model got: no documents, the sources in a system message
  // before the question, the rest as the client sent it.
  const sent = lastTo("/v1/chat/completions");
  assert.equal(sent.body.documents, undefined);
  assert.equal(sent.body.temperature, 0);
  assert.equal(sent.headers.authorization, "Bearer sk-test");
  assert.deepEqual(sent.body.messages.map((m) => m.role), ["system", "system", "user"]);
  assert.match(sent.body.messages[1].content, /<sources>/);
});

test("chat: caveat, the caveat at the start of the answer's content", async () => {
  const data = await client.chat.completions.create({ model: "fake-chat-1", messages: messages(CAVEAT), documents: CAVEAT.documents });
  assert.equal(data.choices[0].message.content, `${decisions.caveat.caveat}\n\n${ANSWER}`);
  assert.equal(data.sufficiency.level, "partial");
});

test("chat streamed: caveat in the first delta, sufficiency on the final chunk", async () => {
  const stream = await client.chat.completions.create({
    model: "fake-chat-1", messages: messages(CAVEAT), documents: CAVEAT.documents, stream: true, stream_options: { include_usage: true },
  });
  let text = "";
  const chunks = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    text += chunk.choices[0]?.delta?.content ?? "";
  }
  assert.equal(text, `${decisions.caveat.caveat}\n\n${ANSWER}`);
  const last = chunks.at(-1);
  assert.equal(last.sufficiency.level, "partial");
  assert.deepEqual(last.choices, []);
  assert.equal(last.id, chunks[0].id);
  assert.ok(chunks.some((c) => c.usage?.total_tokens === 21), "the upstream's usage chunk is relayed");
  assert.equal(chunks.filter((c) => c.sufficiency).length, 1);

  // The SDK's stream helper assembles the same completion and keeps sufficiency.
  const runner = client.chat.completions.stream({ model: "fake-chat-1", messages: messages(CAVEAT), documents: CAVEAT.documents });
  const final = await runner.finalChatCompletion();
  assert.equal(final.choices[0].message.content, `${decisions.caveat.caveat}\n\n${ANSWER}`);
  assert.equal(final.sufficiency.level, "partial");
});

test("chat: refuse, answered without the model, each refusal its own id and time", async () => {
  const calls = up.requests.length;
  const ids = new Set();
  for (let i = 0; i < 2; i++) {
    const { data, response } = await client.chat.completions
      .create({ model: "fake-chat-1", messages: messages(REFUSE), documents: REFUSE.documents })
      .withResponse();
    assert.equal(data.choices[0].message.content, decisions.refuse.refusal.message);
    assert.equal(data.choices[0].finish_reason, "stop");
    assert.equal(data.model, "fake-chat-1");
    assert.match(data.id, /^chatcmpl-ctxgate-[0-9a-f]{32}$/);
    assert.ok(Math.abs(data.created - Date.now() / 1000) < 60, `created ${data.created}`);
    assert.equal(response.headers.get("x-ctxgate-refusal"), "hard");
    assert.equal(data.sufficiency.level, "insufficient");
    ids.add(data.id);
  }
  assert.equal(ids.size, 2);
  const stream = await client.chat.completions.create({ model: "fake-chat-1", messages: messages(REFUSE), documents: REFUSE.documents, stream: true });
  let text = "";
  let sufficiency;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? "";
    sufficiency ??= chunk.sufficiency;
    assert.match(chunk.id, /^chatcmpl-ctxgate-/);
  }
  assert.equal(text, decisions.refuse.refusal.message);
  assert.equal(sufficiency.level, "insufficient");
  assert.equal(up.requests.length, calls, "a refusal never reaches the model");
});

test("responses: gated like chat, plain and streamed", async () => {
  const r = await client.responses.create({ model: "fake-chat-1", input: CAVEAT.query, documents: CAVEAT.documents });
  assert.equal(r.output_text, `${decisions.caveat.caveat}\n\n${ANSWER}`);
  assert.equal(r.sufficiency.level, "partial");
  const sent = lastTo("/v1/responses");
  assert.equal(sent.body.documents, undefined);
  assert.deepEqual(sent.body.input.map((m) => m.role), ["system", "user"]);

  const stream = client.responses.stream({ model: "fake-chat-1", input: CAVEAT.query, documents: CAVEAT.documents });
  let deltas = "";
  stream.on("response.output_text.delta", (e) => (deltas += e.delta));
  const final = await stream.finalResponse();
  assert.equal(deltas, `${decisions.caveat.caveat}\n\n${ANSWER}`);
  assert.equal(final.output_text, deltas);
  assert.equal(final.sufficiency.level, "partial");

  const refused = await client.responses.create({ model: "fake-chat-1", input: REFUSE.query, documents: REFUSE.documents });
  assert.equal(refused.output_text, decisions.refuse.refusal.message);
  assert.match(refused.id, /^resp_ctxgate_[0-9a-f]{32}$/);
  // Without documents: the upstream's own response, untouched.
  const plain = await client.responses.create({ model: "fake-chat-1", input: "hello" });
  assert.equal(plain.output_text, ANSWER);
  assert.equal(plain.sufficiency, undefined);
});

test("models: listed from the upstream, with either base-URL form", async () => {
  for (const c of [client, clientV1]) {
    const ids = [];
    for await (const m of c.models.list()) ids.push(m.id);
    assert.deepEqual(ids, MODELS);
  }
  assert.ok(up.requests.every((r) => !r.path.startsWith("/v1/v1")), "no /v1/v1 reached the upstream");
});

test("embeddings: created through the gateway, base64 (the SDK's default) and float", async () => {
  const res = await clientV1.embeddings.create({ model: "fake-embed-1", input: ["reset password", "invoices"] });
  assert.equal(res.data.length, 2);
  // The SDK asked for base64 and decoded it: float32 precision.
  res.data.forEach((d, i) => d.embedding.forEach((x, j) => assert.ok(Math.abs(x - embed(["reset password", "invoices"][i])[j]) < 1e-6)));
  assert.equal(lastTo("/v1/embeddings").body.encoding_format, "base64");
  const floats = await client.embeddings.create({ model: "fake-embed-1", input: "reset password", encoding_format: "float" });
  assert.deepEqual(floats.data[0].embedding, embed("reset password"));
});

test("other endpoints pass through unchanged: legacy completions, an unknown path, its query and method", async () => {
  const echo = await client.completions.create({ model: "fake-chat-1", prompt: "Say hi", documents: [{ id: "x" }] });
  assert.equal(echo.object, "echo");
  assert.equal(echo.path, "/v1/completions");
  assert.deepEqual(echo.body.documents, [{ id: "x" }], "only chat and responses are gated; other bodies are untouched");
  const got = await clientV1.get("/vector_stores/vs_1/files", { query: { limit: 2, order: "desc" } });
  assert.deepEqual(got, { object: "echo", method: "GET", path: "/v1/vector_stores/vs_1/files", query: { limit: "2", order: "desc" }, body: null });
  const del = await client.delete("/files/file-1");
  assert.equal(del.method, "DELETE");
  const { response } = await client.models.list().withResponse();
  assert.equal(response.headers.get("x-request-id"), "req-upstream");
  assert.equal(response.headers.get("x-ctxgate-action"), null);
});

test("errors: the gateway's own in OpenAI's shape, as the SDK's typed errors", async () => {
  const bad = [{ id: "a", text: "t", scores: { vector: 7 } }];
  await assert.rejects(
    client.chat.completions.create({ model: "fake-chat-1", messages: messages(INJECT), documents: bad }),
    (err) => {
      assert.ok(err instanceof UnprocessableEntityError, err.constructor.name);
      assert.equal(err.status, 422);
      assert.equal(err.code, "bad_field");
      assert.equal(err.param, "documents[0].scores.vector");
      assert.equal(err.type, "invalid_request_error");
      assert.match(err.message, /^422 /);
      assert.equal(err.headers.get("x-ctxgate-action"), "error");
      return true;
    },
  );
  // An unreachable upstream: a 502 that names no address.
  const dead = await startUpstream();
  const deadURL = dead.url;
  await dead.close();
  const orphan = await startServe(["--upstream", `${deadURL}/v1`, "--access-log", "off"]);
  try {
    await assert.rejects(sdk(orphan.url).models.list(), (err) => {
      assert.ok(err instanceof InternalServerError);
      assert.equal(err.status, 502);
      assert.equal(err.code, "upstream");
      assert.equal(err.type, "server_error");
      assert.ok(!err.message.includes(deadURL.slice(7)), err.message);
      return true;
    });
  } finally {
    await orphan.stop();
  }
});

test("fail-open: a request the gate cannot decide goes to the model without its documents", async () => {
  const bad = [{ id: "a", text: "t", scores: { vector: 7 } }];
  const { data, response } = await sdk(openServe.url)
    .chat.completions.create({ model: "fake-chat-1", messages: messages(INJECT), documents: bad, temperature: 0.3 })
    .withResponse();
  assert.equal(data.choices[0].message.content, ANSWER);
  assert.equal(response.headers.get("x-ctxgate-action"), "error");
  assert.equal(response.headers.get("x-ctxgate-error"), "bad_field");
  const sent = lastTo("/v1/chat/completions");
  assert.equal(sent.body.documents, undefined);
  assert.equal(sent.body.temperature, 0.3);
  assert.deepEqual(sent.body.messages, messages(INJECT));
});

test("the example (rag.mjs) runs against the gateway", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [resolve(here, "..", "rag.mjs")], {
    env: { ...process.env, OPENAI_BASE_URL: `${serveV1.url}/v1`, OPENAI_API_KEY: "sk-test" },
    timeout: 30000,
  });
  assert.match(stdout, /^action: +(inject|caveat) /m);
  assert.match(stdout, /^sufficiency: \{"score":/m);
  assert.match(stdout, /^models: +fake-chat-1, fake-embed-1$/m);
});
