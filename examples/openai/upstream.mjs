// upstream.mjs: a small OpenAI-compatible server that stands in for the
// model behind ctxgate serve, so the gateway can be tried (and tested) with
// no API key and no network. It serves under /v1 only:
//
//   POST /v1/chat/completions  a fixed answer, as JSON or as server-sent
//                              events ("stream": true; a usage chunk with
//                              stream_options.include_usage)
//   POST /v1/responses         the same answer as a Responses API response,
//                              JSON or its streamed events
//   GET  /v1/models            two models
//   POST /v1/embeddings        deterministic 8-dimension vectors, as floats
//                              or base64 (the SDK's default encoding_format)
//   anything else under /v1    an echo: {"object":"echo","method","path","query","body"}
//
// Every request is recorded (method, path, headers, parsed body) so a test
// can check what reached the model. Run it on its own:
//
//   node examples/openai/upstream.mjs [PORT]
import { createServer } from "node:http";
import { pathToFileURL } from "node:url";

export const ANSWER = "Open Settings, then Security, then Reset password [S1].";
export const MODELS = ["fake-chat-1", "fake-embed-1"];

/** The answer in the pieces the stream sends. */
const pieces = (text) => text.match(/\S+\s*/g) ?? [text];

/** A deterministic embedding of text: 8 dimensions from its character codes. */
export function embed(text) {
  const v = new Array(8).fill(0);
  for (let i = 0; i < text.length; i++) v[i % 8] += text.charCodeAt(i) / 1000;
  return v;
}

const sse = (res) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  return {
    data: (obj) => res.write(`data: ${typeof obj === "string" ? obj : JSON.stringify(obj)}\n\n`),
    event: (type, obj) => res.write(`event: ${type}\ndata: ${JSON.stringify(obj)}\n\n`),
    end: () => res.end(),
  };
};

function chat(req, res, body) {
  const id = `chatcmpl-up-${req.seq}`;
  const created = 1700000000 + req.seq;
  const model = body.model ?? MODELS[0];
  const usage = { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 };
  if (!body.stream) {
    return json(res, 200, {
      id, object: "chat.completion", created, model,
      choices: [{ index: 0, message: { role: "assistant", content: ANSWER, refusal: null }, logprobs: null, finish_reason: "stop" }],
      usage,
    });
  }
  const s = sse(res);
  const chunk = (choices, extra = {}) => ({ id, object: "chat.completion.chunk", created, model, choices, ...extra });
  s.data(chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]));
  for (const p of pieces(ANSWER)) s.data(chunk([{ index: 0, delta: { content: p }, finish_reason: null }]));
  s.data(chunk([{ index: 0, delta: {}, finish_reason: "stop" }]));
  if (body.stream_options?.include_usage) s.data(chunk([], { usage }));
  s.data("[DONE]");
  s.end();
}

function responses(req, res, body) {
  const id = `resp_up_${req.seq}`;
  const msg = `msg_up_${req.seq}`;
  const base = { id, object: "response", created_at: 1700000000 + req.seq, model: body.model ?? MODELS[0], error: null, incomplete_details: null };
  const part = (text) => ({ type: "output_text", text, annotations: [] });
  const item = (status, content) => ({ type: "message", id: msg, status, role: "assistant", content });
  const done = { ...base, status: "completed", output: [item("completed", [part(ANSWER)])], usage: { input_tokens: 12, output_tokens: 9, total_tokens: 21 } };
  if (!body.stream) return json(res, 200, done);
  const s = sse(res);
  let seq = 0;
  const ev = (type, fields) => s.event(type, { type, sequence_number: seq++, ...fields });
  const at = { item_id: msg, output_index: 0, content_index: 0 };
  ev("response.created", { response: { ...base, status: "in_progress", output: [] } });
  ev("response.output_item.added", { output_index: 0, item: item("in_progress", []) });
  ev("response.content_part.added", { ...at, part: part("") });
  for (const p of pieces(ANSWER)) ev("response.output_text.delta", { ...at, delta: p, logprobs: [] });
  ev("response.output_text.done", { ...at, text: ANSWER, logprobs: [] });
  ev("response.content_part.done", { ...at, part: part(ANSWER) });
  ev("response.output_item.done", { output_index: 0, item: item("completed", [part(ANSWER)]) });
  ev("response.completed", { response: done });
  s.end();
}

function embeddings(res, body) {
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  const data = inputs.map((text, index) => {
    const v = embed(String(text));
    const embedding = body.encoding_format === "base64" ? Buffer.from(new Float32Array(v).buffer).toString("base64") : v;
    return { object: "embedding", index, embedding };
  });
  json(res, 200, { object: "list", data, model: body.model, usage: { prompt_tokens: inputs.length, total_tokens: inputs.length } });
}

function json(res, status, obj) {
  const b = JSON.stringify(obj);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(b), "x-request-id": "req-upstream" });
  res.end(b);
}

/**
 * startUpstream listens on 127.0.0.1 (port 0: an ephemeral port) and
 * resolves to { url, requests, close }. url has no /v1; requests lists
 * { method, path, query, headers, body } in arrival order.
 */
export function startUpstream(port = 0) {
  const requests = [];
  let seq = 0;
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const raw = Buffer.concat(chunks).toString("utf8");
    const url = new URL(req.url, "http://upstream");
    let body = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = raw;
    }
    req.seq = ++seq;
    requests.push({ method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, body });
    const route = `${req.method} ${url.pathname}`;
    if (!url.pathname.startsWith("/v1/")) {
      return json(res, 404, { error: { message: `no route ${url.pathname}`, type: "invalid_request_error", param: null, code: "unknown_url" } });
    }
    switch (route) {
      case "POST /v1/chat/completions":
        return chat(req, res, body);
      case "POST /v1/responses":
        return responses(req, res, body);
      case "GET /v1/models":
        return json(res, 200, { object: "list", data: MODELS.map((id) => ({ id, object: "model", created: 1700000000, owned_by: "upstream" })) });
      case "POST /v1/embeddings":
        return embeddings(res, body);
    }
    json(res, 200, { object: "echo", method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams), body });
  });
  return new Promise((resolve) => {
    server.listen(port, "127.0.0.1", () => {
      const url = `http://127.0.0.1:${server.address().port}`;
      resolve({ url, requests, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const up = await startUpstream(Number(process.argv[2] ?? 8000));
  console.log(`fake OpenAI upstream on ${up.url}/v1`);
}
