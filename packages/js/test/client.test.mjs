// client.test.mjs: CtxgateClient against a real `ctxgate serve` (started
// here on an ephemeral port): the decision bytes and headers, validate and
// feedback with the decision id (and the gap log they write), and every
// failure as its typed exception: the server's error codes and fields,
// a gate deadline (503 with Retry-After), no server, a server that never
// answers, and the caller's own abort.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BadRequestError, CtxgateClient, CtxgateError, GateConnectionError, GateTimeoutError, LimitError, NotFoundError,
} from "../dist/index.js";
import { checkGolden, equalBytes } from "../../../examples/edge/golden.js";
import { cases, startServe, text, typedDecision } from "./helpers.mjs";

let dir, serve, client, gapLog;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), "ctxgate-js-client-"));
  gapLog = join(dir, "gaps.jsonl");
  serve = await startServe(["--gap-log", gapLog, "--max-body-bytes", "65536"]);
  client = new CtxgateClient({ baseUrl: serve.url + "/" });
});
after(async () => {
  await serve?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const golden = (policy, name) => cases.find((c) => c.policy === policy && c.name === name);

// errorReply is a golden error case's reply: the gate's error, as checkGolden reads it.
function errorReply(e) {
  if (!(e instanceof CtxgateError) || e.body === undefined) throw e;
  return { ok: false, status: e.status, body: new TextEncoder().encode(e.body) };
}

test("gate: every default golden case, byte for byte, with its headers and id", async () => {
  const ids = new Set();
  let errors = 0;
  const r = await checkGolden(cases.filter((c) => c.policy === "default"), async (_, req) => {
    let res;
    try {
      res = await client.gate(req);
    } catch (e) {
      errors++;
      return errorReply(e);
    }
    const d = res.decision;
    assert.equal(res.headers.action, d.action);
    assert.equal(res.headers.level, d.level);
    assert.equal(res.headers.confidence, /"confidence":([^,]*)/.exec(text(res.raw))[1]);
    assert.equal(res.headers.policy, `${d.policy.name}@${d.policy.version}`);
    assert.equal(res.headers.refusal, d.action === "refuse" ? "hard" : "");
    assert.match(res.decisionId, /\S/);
    ids.add(res.decisionId);
    return { ok: true, body: res.raw };
  });
  assert.deepEqual(r.failures, []);
  assert.equal(r.passed, cases.filter((c) => c.policy === "default").length);
  assert.equal(ids.size, r.passed - errors, "decision ids are unique");
  assert.ok(errors > 0, "no golden error case: the error path went unchecked");
});

test("gate: another policy's golden cases (serve --policy support-agent)", async (t) => {
  const other = await startServe(["--policy", "support-agent"]);
  t.after(() => other.stop());
  const c2 = new CtxgateClient({ baseUrl: other.url });
  const r = await checkGolden(cases.filter((c) => c.policy === "support-agent"), async (_, req) => {
    try {
      return { ok: true, body: (await c2.gate(req)).raw };
    } catch (e) {
      return errorReply(e);
    }
  });
  assert.deepEqual(r.failures, []);
  assert.equal((await c2.policy()).policy.name, "support-agent");
});

test("gate: request objects and the Decider interface", async () => {
  const c = golden("default", "inject");
  const res = await client.decide(JSON.parse(text(c.request)));
  assert.ok(equalBytes(res.raw, c.want));
  assert.deepEqual(res.decision, typedDecision(c.want));
  assert.ok(res.decisionId);
});

test("validate: with the decision id, a soft refusal is logged as that decision's gap", async () => {
  const c = golden("default", "inject");
  const { decisionId } = await client.gate(c.request);
  const ok = await client.validate({ answer: "Open Settings and choose Security [S1]. Then [S7].", tags: ["S1"] }, { decisionId });
  assert.deepEqual(ok.cited, ["S1"]);
  assert.deepEqual(ok.unknown, ["S7"]);
  const refusal = "I don't have enough information to answer this from the provided sources.";
  const soft = await client.validate({ answer: refusal, tags: ["S1"], query: "How do I reset my password?" }, { decisionId });
  assert.equal(soft.soft_refusal, true);
  await waitFor(() => gapLines().some((e) => e.kind === "refusal_soft" && e.decision_id === decisionId));
});

test("feedback: down writes a gap event, up does not; unknown ids and bad ratings are typed errors", async () => {
  const { decisionId } = await client.gate(golden("default", "caveat").request);
  const down = await client.feedback(decisionId, "down", "the answer was outdated");
  assert.deepEqual(down, { decision_id: decisionId, rating: "down", answer_in_sources: null, gap_event: true, replaced: false, recorded: false });
  await waitFor(() => gapLines().some((e) => e.kind === "thumbs_down" && e.decision_id === decisionId && e.comment === "the answer was outdated"));
  const up = await client.feedback(decisionId, "up");
  assert.equal(up.gap_event, false);
  await assert.rejects(client.feedback("no-such-id", "down"), (e) => e instanceof NotFoundError && e.status === 404 && e.field === "decision_id");
  await assert.rejects(client.feedback(decisionId, "meh"), (e) => e instanceof BadRequestError && e.status === 422 && e.field === "rating");
  const verdict = await client.feedback(decisionId, null, undefined, { answerInSources: false });
  assert.equal(verdict.answer_in_sources, false);
  assert.equal((await client.feedback(decisionId, null, undefined, { answerInSources: true })).replaced, true);
});

test("errors: the server's code, field, status and bytes", async () => {
  const body = '{"query":"q","chunks":[{"text":"a"},{"text":"b","scores":{"vector":2}}]}';
  await assert.rejects(client.gate(body), (e) => e instanceof BadRequestError && e.code === "bad_field" && e.status === 422 &&
    e.field === "chunks[1].scores.vector" && JSON.parse(e.body).error.field === e.field);
  await assert.rejects(client.gate("{"), (e) => e instanceof BadRequestError && e.code === "bad_json" && e.status === 400);
  await assert.rejects(client.gate(JSON.stringify({ query: "x".repeat(70000) })), (e) => e instanceof LimitError && e.status === 413 && e.field === "body");
  await assert.rejects(client.validate({ answer: 3, tags: [] }), (e) => e instanceof BadRequestError && e.code === "bad_answer");
});

test("policy and health", async () => {
  const p = await client.policy();
  assert.equal(p.policy.name, "default");
  assert.equal(p.document.name, "default");
  assert.match(p.loaded_at, /^\d{4}-\d\d-\d\dT/);
  const h = await client.health();
  assert.equal(h.status, "ok");
  assert.equal(h.policy.sha256, p.policy.sha256);
});

test("a gate deadline: GateTimeoutError with the server's Retry-After", async (t) => {
  const slow = await startServe(["--gate-timeout", "1ns"]);
  t.after(() => slow.stop());
  const c = new CtxgateClient({ baseUrl: slow.url });
  await assert.rejects(c.gate(golden("default", "inject").request), (e) => e instanceof GateTimeoutError && e.code === "timeout" && e.status === 503 && e.retryAfter >= 1);
});

test("no server: GateConnectionError", async () => {
  const port = await new Promise((res) => { const s = createServer().listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => res(p)); }); });
  const c = new CtxgateClient({ baseUrl: `http://127.0.0.1:${port}` });
  await assert.rejects(c.health(), (e) => e instanceof GateConnectionError && e.code === "connection" && e.status === 0);
});

test("a server that never answers: the client's timeout; the caller's abort is the caller's", async (t) => {
  // A TCP listener that accepts and then says nothing (a hung server).
  const sockets = [];
  const hung = createServer((s) => sockets.push(s));
  await new Promise((res) => hung.listen(0, "127.0.0.1", res));
  t.after(() => { sockets.forEach((s) => s.destroy()); hung.close(); });
  const c = new CtxgateClient({ baseUrl: `http://127.0.0.1:${hung.address().port}`, timeoutMs: 200 });
  const t0 = Date.now();
  await assert.rejects(c.gate('{"query":"q"}'), (e) => e instanceof GateTimeoutError && e.code === "client_timeout" && e.status === 0);
  assert.ok(Date.now() - t0 < 5000);
  const ctl = new AbortController();
  const p = c.gate('{"query":"q"}', { signal: ctl.signal, timeoutMs: 0 });
  ctl.abort();
  await assert.rejects(p, (e) => e.name === "AbortError" && !(e instanceof CtxgateError));
});

function gapLines() {
  let t = "";
  try {
    t = readFileSync(gapLog, "utf8");
  } catch {
    return [];
  }
  return t.split("\n").filter((l) => l).map((l) => JSON.parse(l));
}

// waitFor polls cond (the gap log is written by the server's writer
// goroutine, after the answer) for up to 5 s.
async function waitFor(cond) {
  for (let i = 0; i < 100; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`not within 5 s; gap log: ${JSON.stringify(gapLines())}`);
}
