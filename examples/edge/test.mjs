// test.mjs: the workerd check, run by scripts/test-edge.sh against a running
// `workerd serve config.capnp` (node examples/edge/test.mjs http://127.0.0.1:PORT).
//
// 1. every golden request, POSTed to /<policy>/v1/gate, must come back
//    byte-identical to its golden decision (the Go runner's bytes);
// 2. malformed requests must give the error JSON with a 4xx;
// 3. the gateway route: refusals answered locally (JSON and SSE), other
//    decisions rewritten exactly as the decision says, bodies without
//    documents passed through, field names in errors the body's own, and
//    with an upstream, the answer check headers.
//
// Prints "edge: N passed, M failed" and exits 1 on any failure. Every request
// has a timeout, so a hung Worker fails the run instead of stalling it.
import { readFileSync, readdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BAD_INPUTS, checkError, checkGolden, goldenCases, STATUS, summary, text } from "./golden.js";
import { systemText } from "./gateway.js";

const base = process.argv[2];
if (!base) {
  console.error("usage: node test.mjs http://127.0.0.1:PORT");
  process.exit(2);
}
const root = process.env.CTXGATE_ROOT || resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const io = {
  readBytes: (p) => new Uint8Array(readFileSync(p)),
  readText: (p) => readFileSync(p, "utf8"),
  listDir: (p) => readdirSync(p),
};
const TIMEOUT_MS = 10000;

async function post(path, body, headers = {}) {
  const res = await fetch(base + path, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  return { status: res.status, headers: res.headers, body: new Uint8Array(await res.arrayBuffer()) };
}

let passed = 0;
const failures = [];
function record(name, problems) {
  if (problems.length) failures.push(`${name}: ${problems.join("; ")}`);
  else passed++;
}

// 1. Golden decisions over HTTP.
const cases = await goldenCases(io, root);
const golden = await checkGolden(cases, async (policy, req) => {
  const r = await post(`/${policy}/v1/gate`, req);
  return r.status === 200 ? { ok: true, body: r.body } : { ok: false, status: r.status, body: r.body };
});
passed += golden.passed;
failures.push(...golden.failures);

// The Worker without a POLICY binding runs the module's built-in default,
// which is policies/default.json: the same bytes.
{
  const res = await checkGolden(cases.filter((c) => c.policy === "default"), async (_, req) => {
    const r = await post("/builtin/v1/gate", req);
    return r.status === 200 ? { ok: true, body: r.body } : { ok: false, status: r.status, body: r.body };
  });
  passed += res.passed;
  failures.push(...res.failures.map((f) => "builtin policy: " + f));
}

// 2. Malformed input: the error JSON with its 4xx, under every policy's Worker.
for (const policy of [...new Set(cases.map((c) => c.policy))]) {
  for (const bad of BAD_INPUTS) {
    const r = await post(`/${policy}/v1/gate`, bad.body);
    record(`${policy}: bad input "${bad.name}"`, checkError(bad, r.status, r.body));
  }
}
{
  // default-upstream's MAX_BODY_BYTES is 65536 (config.capnp).
  const big = "x".repeat(65537);
  const r = await post("/default-upstream/v1/gate", big);
  record("body over max_body_bytes", checkError({ status: 413, code: "limit", field: "body" }, r.status, r.body));
  const atLimit = '{"query":"q"}';
  const ok = await post("/default-upstream/v1/gate", atLimit + " ".repeat(65536 - atLimit.length));
  record("body at max_body_bytes", ok.status === 200 ? [] : [`status ${ok.status}: ${text(ok.body).slice(0, 200)}`]);
  const g = await fetch(base + "/default/v1/gate", { signal: AbortSignal.timeout(TIMEOUT_MS) });
  record("GET /v1/gate", checkError({ status: 405, code: "method_not_allowed", field: "" }, g.status, new Uint8Array(await g.arrayBuffer())));
}

// 3. The gateway route.
const golden1 = (policy, name) => cases.find((c) => c.policy === policy && c.name === name);

// chatBody turns a golden gate request into a chat-completion body: the
// question as the last user message, chunks as "documents", anything else
// under "ctxgate".
function chatBody(req, extra = {}) {
  const { query, chunks, ...rest } = JSON.parse(text(req));
  const body = {
    model: "test-model",
    messages: [
      { role: "system", content: "You are a test assistant." },
      { role: "user", content: "an earlier question" },
      { role: "assistant", content: "an earlier answer" },
      { role: "user", content: query },
    ],
    temperature: 0,
    ...extra,
  };
  if (chunks) body.documents = chunks;
  if (Object.keys(rest).length) body.ctxgate = rest;
  return body;
}

// Every golden case through the gateway, checked against its golden decision,
// or for a golden error the error JSON with the body's own field names
// (chunks are the documents, the other request members the extension's).
for (const c of cases) {
  const d = JSON.parse(text(c.want));
  const body = chatBody(c.request);
  const r = await post(`/${c.policy}/v1/chat/completions`, JSON.stringify(body));
  if (d.error) {
    const field = d.error.field.startsWith("chunks") ? "documents" + d.error.field.slice("chunks".length) : "ctxgate." + d.error.field;
    record(`gateway ${c.policy}/${c.name} (${d.error.code})`, checkError({ status: STATUS[d.error.code], code: d.error.code, field }, r.status, r.body));
    continue;
  }
  const p = [];
  const h = (k) => r.headers.get(k);
  if (r.status !== 200) p.push(`status ${r.status}: ${text(r.body).slice(0, 200)}`);
  if (h("x-ctxgate-action") !== d.action) p.push(`action header ${h("x-ctxgate-action")}, want ${d.action}`);
  if (h("x-ctxgate-confidence") !== /"confidence":([^,]*)/.exec(text(c.want))[1]) p.push(`confidence header ${h("x-ctxgate-confidence")}`);
  if (r.status === 200) p.push(...checkChat(body, d, r, false));
  record(`gateway ${c.policy}/${c.name} (${d.action})`, p);
}

// checkChat checks one gateway answer against the decision d.
function checkChat(sent, d, r, stream) {
  const p = [];
  const got = text(r.body);
  if (d.action === "refuse") {
    if (stream) {
      if (!r.headers.get("content-type").startsWith("text/event-stream")) p.push("refusal stream is not SSE");
      const events = got.split("\n\n").filter((e) => e);
      const first = JSON.parse(events[0].slice(6));
      if (first.choices[0].delta.content !== d.refusal.message) p.push("SSE refusal message differs");
      if (events[events.length - 1] !== "data: [DONE]") p.push("SSE does not end with [DONE]");
      return p;
    }
    const v = JSON.parse(got);
    if (v.id !== "ctxgate-refusal" || v.object !== "chat.completion") p.push("not a refusal completion");
    if (v.model !== sent.model) p.push(`model ${v.model}`);
    if (v.choices[0].message.content !== d.refusal.message) p.push("refusal message differs from the decision");
    if (v.sufficiency.level !== d.level || v.sufficiency.score !== d.confidence) p.push("sufficiency differs");
    return p;
  }
  if (r.headers.get("x-ctxgate-upstream") !== "none") p.push("no x-ctxgate-upstream: none");
  const v = JSON.parse(got);
  if ("documents" in v || "ctxgate" in v) p.push("documents or ctxgate left in the upstream body");
  if (v.model !== sent.model || v.temperature !== sent.temperature) p.push("other members changed");
  const want = structuredClone(sent.messages);
  const last = want.length - 1;
  if (d.action === "fallback") {
    if (d.prompt && d.prompt.minimal) want[last] = { role: "user", content: d.prompt.minimal };
  } else {
    want.splice(last, 0, { role: "system", content: systemText(d) });
  }
  if (JSON.stringify(v.messages) !== JSON.stringify(want)) {
    p.push(`messages differ from the decision's rewrite:\n  got  ${JSON.stringify(v.messages).slice(0, 300)}\n  want ${JSON.stringify(want).slice(0, 300)}`);
  }
  return p;
}

{
  // A streamed refusal.
  const c = cases.find((x) => JSON.parse(text(x.want)).action === "refuse");
  const body = chatBody(c.request, { stream: true });
  const r = await post(`/${c.policy}/v1/chat/completions`, JSON.stringify(body));
  record("gateway: streamed refusal", r.status === 200 ? checkChat(body, JSON.parse(text(c.want)), r, true) : [`status ${r.status}`]);
}
{
  // No documents: passed through untouched.
  const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] });
  const r = await post("/default/v1/chat/completions", body);
  const p = [];
  if (r.status !== 200 || r.headers.get("x-ctxgate-action") !== "skip") p.push(`status ${r.status}, action ${r.headers.get("x-ctxgate-action")}`);
  if (text(r.body) !== body) p.push("body changed");
  record("gateway: no documents, skipped", p);
}
// Bad chat bodies: the error JSON with the body's own field names.
for (const bad of [
  { name: "not JSON", body: "{", status: 400, code: "bad_json", field: "" },
  { name: "documents not an array", body: '{"messages":[{"role":"user","content":"q"}],"documents":{}}', status: 422, code: "bad_field", field: "documents" },
  {
    name: "bad score in documents",
    body: '{"messages":[{"role":"user","content":"q"}],"documents":[{"text":"a"},{"text":"b","scores":{"vector":7}}]}',
    status: 422, code: "bad_field", field: "documents[1].scores.vector",
  },
  { name: "no user message", body: '{"messages":[{"role":"system","content":"s"}],"documents":[]}', status: 422, code: "bad_field", field: "messages" },
  {
    name: "bad extension member",
    body: '{"messages":[{"role":"user","content":"q"}],"documents":[],"ctxgate":{"query_embedding":"x"}}',
    status: 422, code: "bad_field", field: "ctxgate.query_embedding",
  },
]) {
  const r = await post("/default/v1/chat/completions", bad.body);
  const p = checkError(bad, r.status, r.body);
  if (r.headers.get("x-ctxgate-action") !== "error" || r.headers.get("x-ctxgate-error") !== bad.code) p.push("no error headers");
  record(`gateway: bad body "${bad.name}"`, p);
}
{
  // With an upstream: the rewritten body and the decision headers reach it,
  // and its answer gets the answer check ([S9] is not offered, one sentence
  // is uncited).
  const c = cases.find((x) => x.policy === "default" && JSON.parse(text(x.want)).action === "inject");
  const d = JSON.parse(text(c.want));
  const body = chatBody(c.request);
  const r = await post("/default-upstream/v1/chat/completions", JSON.stringify(body));
  const p = [];
  const v = r.status === 200 ? JSON.parse(text(r.body)) : null;
  if (!v) {
    p.push(`status ${r.status}: ${text(r.body).slice(0, 200)}`);
  } else {
    if (v.id !== "test-upstream") p.push("not the upstream's answer");
    if (v.received_headers["x-ctxgate-action"] !== "inject") p.push("upstream did not get the decision headers");
    if (v.received.messages.at(-2).content !== systemText(d)) p.push("upstream did not get the sources");
    if ("documents" in v.received) p.push("upstream got the documents");
    const h = (k) => r.headers.get(k);
    if (h("x-ctxgate-answer-check") !== "ok") p.push(`answer check ${h("x-ctxgate-answer-check")}`);
    if (h("x-ctxgate-soft-refusal") !== "false") p.push(`soft refusal ${h("x-ctxgate-soft-refusal")}`);
    if (h("x-ctxgate-unknown-citations") !== "S9") p.push(`unknown citations ${h("x-ctxgate-unknown-citations")}`);
    if (h("x-ctxgate-uncited-sentences") !== "1") p.push(`uncited ${h("x-ctxgate-uncited-sentences")}`);
  }
  record("gateway: upstream and answer check", p);
}
{
  const g = await fetch(base + "/default/v1/policy", { signal: AbortSignal.timeout(TIMEOUT_MS) });
  const t = await g.text();
  record("GET /v1/policy", g.status === 200 && t.includes('"default"') ? [] : [`status ${g.status}: ${t.slice(0, 200)}`]);
}

for (const f of failures) console.error("FAIL " + f);
console.log(summary("edge", passed, failures.length));

// Per-request cost seen by a client over loopback HTTP (workerd's own clock
// does not advance during a request, so it cannot time itself). Reported,
// never asserted.
if (process.env.CTXGATE_TIMING !== "0") {
  const c = golden1("default", "inject");
  const health = () => fetch(base + "/default/healthz", { signal: AbortSignal.timeout(TIMEOUT_MS) }).then((r) => r.text());
  const gate = () => post("/default/v1/gate", c.request);
  for (let i = 0; i < 50; i++) await Promise.all([health(), gate()]);
  // Interleaved, so both see the same machine load.
  const n = 300;
  let th = 0, tg = 0;
  for (let i = 0; i < n; i++) {
    let t = performance.now();
    await health();
    th += performance.now() - t;
    t = performance.now();
    await gate();
    tg += performance.now() - t;
  }
  const us = (t) => ((t * 1000) / n).toFixed(0);
  console.log(`edge: loopback HTTP round trip through the router, ${n} sequential each: ` +
    `POST /v1/gate default/inject ${us(tg)} µs, GET /healthz ${us(th)} µs (the gate's share: the difference)`);
}
process.exit(failures.length ? 1 : 0);
