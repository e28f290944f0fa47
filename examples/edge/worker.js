// worker.js: the ctxgate edge function, an ES-module Worker for workerd and
// Cloudflare Workers. The gate is the same ctxgate.wasm every other host
// runs, through the Extism JavaScript SDK's browser build.
//
// The module is imported as "./ctxgate.wasm", a compiled WebAssembly.Module
// (a Worker may not compile Wasm bytes at run time; workerd and wrangler
// compile it at upload).
//
// Bindings (config.capnp for workerd, wrangler.toml for Cloudflare):
//   POLICY         the policy JSON (text). Absent or empty: the module's
//                  built-in default policy. A signed bundle needs TRUST_KEYS.
//   TRUST_KEYS     optional: trusted public keys (the guest's trust_keys)
//   UPSTREAM       optional service binding: where the gateway forwards
//   UPSTREAM_URL   optional: the same as a URL (used when UPSTREAM is absent)
//   DOCUMENTS_PATH optional: dotted path of the documents array ("documents")
//   QUERY_PATH     optional: dotted path of the question (default: last user message)
//   MAX_BODY_BYTES optional: request body limit (8 MiB)
//
// Routes:
//   POST /v1/gate              request JSON -> decision JSON (the module's bytes)
//   POST /v1/validate          answer JSON -> validation JSON
//   GET  /v1/policy            the loaded policy's description
//   GET  /healthz              "ok"
//   POST /v1/chat/completions  the gateway (gateway.js): refusals are answered
//                              here; other decisions forward the rewritten body
//                              to UPSTREAM, or with no upstream configured,
//                              return that body (x-ctxgate-upstream: none) so
//                              a caller or a test can see what would be sent.
import createPlugin from "@extism/extism";
import wasm from "./ctxgate.wasm";
import { Gate, errorJSON, statusOf } from "./ctxgate.js";
import * as chat from "./gateway.js";

const DEFAULT_MAX_BODY = 8 << 20;
const JSON_TYPE = "application/json";

// One instance per isolate, made on the first request and reused: a Worker
// isolate runs one request's JavaScript at a time, and Gate serialises its
// calls, so requests share it safely.
let gatePromise = null;

function gateOf(env) {
  if (!gatePromise) {
    const extra = env.TRUST_KEYS ? { trust_keys: env.TRUST_KEYS } : {};
    gatePromise = Gate.create(createPlugin, wasm, env.POLICY || "", extra);
    // A failed instantiation is retried on the next request, not cached.
    gatePromise.catch(() => { gatePromise = null; });
  }
  return gatePromise;
}

export default {
  async fetch(request, env) {
    try {
      return await route(request, env);
    } catch (err) {
      // A trap or a broken binding: a bug, not bad input. Say so, once.
      console.error("ctxgate: internal error:", err && err.stack || err);
      return errorReply(500, "internal", String(err && err.message || err));
    }
  },
};

async function route(request, env) {
  const { pathname } = new URL(request.url);
  const post = request.method === "POST";
  switch (pathname) {
    case "/v1/gate":
      return post ? gateRoute(request, env) : methodNotAllowed("POST");
    case "/v1/validate":
      return post ? validateRoute(request, env) : methodNotAllowed("POST");
    case "/v1/chat/completions":
      return post ? chatRoute(request, env) : methodNotAllowed("POST");
    case "/v1/policy":
      if (request.method !== "GET") return methodNotAllowed("GET");
      return reply(await (await gateOf(env)).describe());
    case "/healthz":
      return new Response("ok\n", { headers: { "content-type": "text/plain" } });
  }
  return errorReply(404, "not_found", "no route " + pathname);
}

async function gateRoute(request, env) {
  const body = await readBody(request, env);
  if (body instanceof Response) return body;
  const r = await (await gateOf(env)).evaluate(body);
  if (!r.ok) return reply(r);
  const text = new TextDecoder().decode(r.body);
  const headers = decisionHeaders(JSON.parse(text), text);
  headers["content-type"] = JSON_TYPE;
  // The module's bytes, unchanged: byte-identical to every other host.
  return new Response(r.body, { status: 200, headers });
}

async function validateRoute(request, env) {
  const body = await readBody(request, env);
  if (body instanceof Response) return body;
  return reply(await (await gateOf(env)).validate(body));
}

async function chatRoute(request, env) {
  const body = await readBody(request, env);
  if (body instanceof Response) return body;
  const docsPath = splitPath(env.DOCUMENTS_PATH || "documents");
  const queryPath = env.QUERY_PATH ? splitPath(env.QUERY_PATH) : [];
  let c;
  try {
    c = chat.parseChat(new TextDecoder().decode(body), docsPath, queryPath);
  } catch (err) {
    if (!(err instanceof chat.BodyError)) throw err;
    return gateFailed(err.code, err.field, err.message);
  }
  if (c === chat.NOT_GATED) {
    return forward(request, env, body, { "x-ctxgate-action": "skip" });
  }

  const gate = await gateOf(env);
  const r = await gate.evaluate(chat.gateRequest(c));
  if (!r.ok) {
    const e = JSON.parse(new TextDecoder().decode(r.body)).error;
    return gateFailed(e.code, chat.userField(c, e.field), e.message);
  }
  const text = new TextDecoder().decode(r.body);
  const d = JSON.parse(text);
  const headers = decisionHeaders(d, text);

  let out;
  switch (d.action) {
    case "refuse": {
      const msg = d.refusal ? d.refusal.message : "";
      if (c.stream) {
        headers["content-type"] = "text/event-stream";
        headers["cache-control"] = "no-cache";
        return new Response(chat.refusalStream(c.model, msg), { status: 200, headers });
      }
      headers["content-type"] = JSON_TYPE;
      return new Response(chat.refusalCompletion(c.model, msg, d, chat.confidenceRaw(text)), { status: 200, headers });
    }
    case "inject":
    case "caveat":
      if (c.lastUser < 0) {
        return gateFailed("bad_field", "messages", "the sources go before the last user message, and there is none");
      }
      out = chat.rewrite(c, chat.systemText(d), "", false);
      break;
    case "fallback":
      out = d.prompt && d.prompt.minimal && c.lastUser >= 0
        ? chat.rewrite(c, "", d.prompt.minimal, true)
        : chat.rewrite(c, "", "", false);
      break;
    default:
      return errorReply(500, "internal", "the gate returned an unknown action " + JSON.stringify(d.action));
  }
  const check = d.action !== "fallback" ? { gate, tags: chat.offeredTags(d), query: c.query } : null;
  return forward(request, env, new TextEncoder().encode(out), headers, check, c.stream);
}

// forward sends body to the upstream and relays its answer with the
// decision headers. Without an upstream it returns the body it would send.
// A JSON answer to an inject or caveat gets the answer check (check).
async function forward(request, env, body, headers, check = null, stream = false) {
  const upstream = env.UPSTREAM || (env.UPSTREAM_URL ? { fetch: (req) => fetch(req) } : null);
  if (!upstream) {
    return new Response(body, {
      status: 200,
      headers: { ...headers, "content-type": JSON_TYPE, "x-ctxgate-upstream": "none" },
    });
  }
  const url = env.UPSTREAM && !env.UPSTREAM_URL
    ? new URL(request.url)
    : new URL(new URL(request.url).pathname, env.UPSTREAM_URL);
  const fwd = new Headers(request.headers);
  fwd.delete("content-length");
  fwd.delete("accept-encoding");
  for (const [k, v] of Object.entries(headers)) fwd.set(k, v);
  const res = await upstream.fetch(new Request(url, { method: "POST", headers: fwd, body }));

  const out = new Headers(res.headers);
  for (const [k, v] of Object.entries(headers)) out.set(k, v);
  const json = (res.headers.get("content-type") || "").includes("json");
  if (!check || stream || res.status !== 200 || !json) {
    return new Response(res.body, { status: res.status, headers: out });
  }
  const answerBody = await res.arrayBuffer();
  await answerCheck(check, answerBody, out);
  return new Response(answerBody, { status: res.status, headers: out });
}

// answerCheck validates the upstream's answer (the support-agent article: soft refusal,
// citations) and reports it in headers; it never changes the answer.
async function answerCheck(check, answerBody, out) {
  let content;
  try {
    const v = JSON.parse(new TextDecoder().decode(answerBody));
    content = v.choices[0].message.content;
  } catch {
    content = undefined;
  }
  if (typeof content !== "string") {
    out.set("x-ctxgate-answer-check", "skipped");
    return;
  }
  const input = { answer: content, tags: check.tags };
  if (check.query !== undefined) input.query = check.query;
  const r = await check.gate.validate(JSON.stringify(input));
  if (!r.ok) {
    out.set("x-ctxgate-answer-check", "error");
    return;
  }
  const v = JSON.parse(new TextDecoder().decode(r.body));
  out.set("x-ctxgate-answer-check", "ok");
  out.set("x-ctxgate-soft-refusal", String(v.soft_refusal));
  if (v.unknown && v.unknown.length) out.set("x-ctxgate-unknown-citations", v.unknown.join(","));
  out.set("x-ctxgate-uncited-sentences", String((v.uncited_sentences || []).length));
}

// readBody returns the body bytes, or a 413 reply over the limit. It reads
// at most limit+1 bytes, so an oversized body is never buffered whole.
async function readBody(request, env) {
  const limit = Number(env.MAX_BODY_BYTES) > 0 ? Number(env.MAX_BODY_BYTES) : DEFAULT_MAX_BODY;
  const declared = Number(request.headers.get("content-length"));
  if (declared > limit) return tooLarge(declared, limit);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const parts = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > limit) {
      await reader.cancel();
      return tooLarge(n, limit);
    }
    parts.push(value);
  }
  const body = new Uint8Array(n);
  let off = 0;
  for (const part of parts) {
    body.set(part, off);
    off += part.length;
  }
  return body;
}

function tooLarge(n, limit) {
  const what = n > limit + 1 ? `request body of ${n} bytes` : "request body";
  return errorReply(413, "limit", `${what} exceeds max_body_bytes ${limit}`, "body");
}

// decisionHeaders are the server's and the Envoy filter's x-ctxgate-*
// headers; the confidence is the decision's own spelling.
function decisionHeaders(d, text) {
  const h = {
    "x-ctxgate-action": d.action,
    "x-ctxgate-level": d.level,
    "x-ctxgate-confidence": chat.confidenceRaw(text),
    "x-ctxgate-policy": d.policy ? d.policy.name + (d.policy.version ? "@" + d.policy.version : "") : "",
  };
  if (d.refusal) h["x-ctxgate-refusal"] = d.refusal.type;
  return h;
}

function gateFailed(code, field, message) {
  return new Response(errorJSON(code, message, field), {
    status: statusOf(code),
    headers: { "content-type": JSON_TYPE, "x-ctxgate-action": "error", "x-ctxgate-error": code },
  });
}

// reply turns a Gate result into a response: the output, or the error JSON
// with its status.
function reply(r) {
  return new Response(r.body, { status: r.ok ? 200 : r.status, headers: { "content-type": JSON_TYPE } });
}

function errorReply(status, code, message, field = "") {
  return new Response(errorJSON(code, message, field), { status, headers: { "content-type": JSON_TYPE } });
}

function methodNotAllowed(allow) {
  const r = errorReply(405, "method_not_allowed", "use " + allow);
  r.headers.set("allow", allow);
  return r;
}

function splitPath(s) {
  return s.split(".").filter((k) => k);
}
