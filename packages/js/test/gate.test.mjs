// gate.test.mjs: the in-process gate under Node: the checks every runtime
// runs (test/runtime/check.js: every golden request by preset name, byte for
// byte, bad input as typed exceptions), the golden requests by policy JSON,
// policies by name, text, object and signed bundle (verified inside the
// module, fail closed), module sources, traps.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as pkg from "../dist/index.js";
import { checkGolden, equalBytes, goldenErrorCode } from "../../../examples/edge/golden.js";
import { checkCount, runChecks } from "./runtime/check.js";
import { cases, ctxgateBin, decideWith, gatesByPolicy, io, policies, root, text, typedDecision } from "./helpers.mjs";

const { BadRequestError, Gate, LimitError, ModuleTrapError, PolicyError, PRESETS, loadModule, presetNames } = pkg;

const gateFor = gatesByPolicy(Gate);

test("node: the checks every runtime runs (golden by preset name, bad input, validate, presets)", async () => {
  const r = await runChecks({ pkg, io, root });
  console.log(`node: ${r.passed} passed, ${r.failed} failed`);
  assert.deepEqual(r.failures, []);
  assert.equal(r.passed, checkCount(cases.length));
});

test("golden decisions, policy as the JSON of policies/<name>.json", async () => {
  const gates = new Map();
  const r = await checkGolden(cases, decideWith(async (p) => {
    if (!gates.has(p)) gates.set(p, await Gate.create({ policy: io.readText(`${root}/policies/${p}.json`) }));
    return gates.get(p);
  }));
  assert.deepEqual(r.failures, []);
  assert.equal(r.passed, cases.length);
});

test("no policy is the built-in default: the default preset's bytes", async () => {
  const gate = await Gate.create();
  assert.equal(gate.describe().policy.name, "default");
  const r = await checkGolden(cases.filter((c) => c.policy === "default"), decideWith(async () => gate));
  assert.deepEqual(r.failures, []);
});

test("the presets are the repository's policies", () => {
  assert.deepEqual([...presetNames], [...policies].sort());
  for (const p of presetNames) assert.equal(PRESETS[p], io.readText(`${root}/policies/${p}.json`));
});

test("a policy object decides like its JSON", async () => {
  const c = cases.find((x) => x.policy === "support-agent");
  const gate = await Gate.create({ policy: JSON.parse(PRESETS["support-agent"]) });
  assert.ok(equalBytes(gate.evaluateBytes(c.request), c.want));
});

test("requests as objects, strings and views into larger buffers", async () => {
  const gate = await gateFor("default");
  const c = cases.find((x) => x.policy === "default" && x.name === "inject");
  assert.ok(equalBytes(gate.evaluateBytes(JSON.parse(text(c.request))), c.want), "object");
  assert.ok(equalBytes(gate.evaluateBytes(text(c.request)), c.want), "string");
  // A view: the bytes around it must not reach the module.
  const big = new Uint8Array(c.request.length + 20).fill(0x20);
  big.set(c.request, 10);
  big[c.request.length + 10] = 0x7b; // a stray "{" right after the view
  assert.ok(equalBytes(gate.evaluateBytes(big.subarray(10, 10 + c.request.length)), c.want), "view");
  assert.deepEqual(gate.evaluate(c.request), typedDecision(c.want));
});

test("one instance, many calls of different sizes: the same bytes every time", async () => {
  const gate = await gateFor("default");
  const own = cases.filter((c) => c.policy === "default" && !goldenErrorCode(c.want));
  for (let round = 0; round < 20; round++) {
    for (const c of round % 2 ? own : [...own].reverse()) assert.ok(equalBytes(gate.evaluateBytes(c.request), c.want), `${c.name} round ${round}`);
  }
});

test("validate: citations, unknown tags, soft refusals", async () => {
  const gate = await gateFor("default");
  const v = gate.validate({ answer: "Open Settings [S1]. Then click reset [S9]. It is easy.", tags: ["S1", "S2"] });
  assert.deepEqual(v.cited, ["S1"]);
  assert.deepEqual(v.unknown, ["S9"]);
  assert.deepEqual(v.uncited_sentences, ["It is easy."]);
  assert.equal(v.soft_refusal, false);
  const refusal = "I don't have enough information to answer this from the provided sources.";
  const s = gate.validate({ answer: `"${refusal}"`, tags: ["S1"], query: "q?" });
  assert.equal(s.soft_refusal, true);
  assert.equal(s.gap_event.kind, "refusal_soft");
  assert.equal(s.gap_event.query, "q?");
  assert.throws(() => gate.validate({ answer: 1, tags: [] }), (e) => e instanceof BadRequestError && e.code === "bad_answer" && e.field === "answer");
});

test("describe names the policy", async () => {
  for (const p of presetNames) {
    const d = (await gateFor(p)).describe();
    assert.equal(d.policy.name, p);
    assert.equal(d.schema_version, "1");
    assert.match(d.policy.sha256, /^[0-9a-f]{64}$/);
  }
});

test("unknown preset, invalid policy: PolicyError at create", async () => {
  await assert.rejects(Gate.create({ policy: "strict" }), (e) => e instanceof PolicyError && /presets: default, rag-confidence/.test(e.message));
  await assert.rejects(Gate.create({ policy: '{"name":"x"}' }), (e) => e instanceof PolicyError && e.code === "bad_policy" && e.field !== "");
  await assert.rejects(Gate.create({ policy: "{" }), (e) => e instanceof PolicyError);
});

test("maxInputBytes: larger inputs never reach the module", async () => {
  const gate = await Gate.create({ maxInputBytes: 64 });
  assert.throws(() => gate.evaluateBytes('{"query":"' + "x".repeat(64) + '"}'), (e) => e instanceof LimitError && e.status === 413);
  assert.equal(gate.evaluate('{"query":"short"}').action, "refuse");
});

test("signed policies: verified inside the module, fail closed", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "ctxgate-js-sign-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync(ctxgateBin, ["keygen", "--out", join(dir, "k")], { stdio: "pipe" });
  const bundle = execFileSync(ctxgateBin, ["sign", "--key", join(dir, "k.key"), `${root}/policies/wikigr.json`]).toString();
  const trustKeys = readFileSync(join(dir, "k.pub"), "utf8");
  const gate = await Gate.create({ policy: bundle, trustKeys });
  assert.equal(gate.describe().policy.name, "wikigr");
  const c = cases.find((x) => x.policy === "wikigr");
  assert.ok(equalBytes(gate.evaluateBytes(c.request), c.want));
  // Tampered: one threshold changed after signing.
  const tampered = bundle.replace(/"version":"[^"]*"/, '"version":"9"');
  assert.notEqual(tampered, bundle);
  await assert.rejects(Gate.create({ policy: tampered, trustKeys }), (e) => e instanceof PolicyError);
  // A bundle with no keys to check it, and keys with a plain policy.
  await assert.rejects(Gate.create({ policy: bundle }), (e) => e instanceof PolicyError && e.field === "trust_keys");
  await assert.rejects(Gate.create({ policy: "wikigr", trustKeys }), (e) => e instanceof PolicyError && e.field === "policy");
  writeFileSync(join(dir, "unused"), "");
});

test("module sources: bytes, compiled module, path, file URL", async () => {
  const path = `${root}/host/wasm/ctxgate.wasm`;
  const bytes = readFileSync(path);
  const c = cases.find((x) => x.policy === "default");
  for (const module of [bytes, new Uint8Array(bytes), await loadModule(path), new URL(`file://${path}`), path]) {
    const gate = await Gate.create({ module });
    assert.ok(equalBytes(gate.evaluateBytes(c.request), c.want));
  }
  await assert.rejects(Gate.create({ module: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]) }), /raw exports/);
});

test("a trap drops the instance; the next call gets a new one", async () => {
  // A module with the raw exports whose ctxgate_call traps on op 0 and
  // answers the error JSON on others: the smallest host-side check that a
  // trap is a ModuleTrapError and not reused.
  const gate = await Gate.create({ module: trapModule() });
  assert.throws(() => gate.evaluateBytes("{}"), (e) => e instanceof ModuleTrapError && e.code === "internal");
  assert.throws(() => gate.evaluateBytes("{}"), ModuleTrapError);
  assert.equal(gate.describe().policy.name, "t");
});

test("a closed gate refuses calls", async () => {
  const gate = await Gate.create();
  gate.close();
  assert.throws(() => gate.describe(), /closed/);
});

// trapModule assembles a tiny module by hand: memory (exported, 1 page,
// holding a describe answer at 16), _initialize, ctxgate_input (returns
// 1024), ctxgate_call(op, n): unreachable for op 0, else the answer.
function trapModule() {
  const answer = new TextEncoder().encode('{"version":"t","schema_version":"1","policy":{"name":"t","version":"1","sha256":"0"}}');
  const u = (n) => { const o = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; o.push(b); } while (n); return o; };
  const str = (s) => [...u(s.length), ...new TextEncoder().encode(s)];
  const sec = (id, body) => [id, ...u(body.length), ...body];
  const vec = (items) => [...u(items.length), ...items.flat()];
  const types = vec([[0x60, 0, 0], [0x60, 1, 0x7f, 1, 0x7f], [0x60, 2, 0x7f, 0x7f, 1, 0x7e]]);
  const funcs = vec([[0], [1], [2]]);
  const mem = vec([[0, 1]]);
  const exps = vec([[...str("memory"), 2, 0], [...str("_initialize"), 0, 0], [...str("ctxgate_input"), 0, 1], [...str("ctxgate_call"), 0, 2]]);
  const packed = (16n << 32n) | BigInt(answer.length);
  const sleb = (v) => { const o = []; for (;;) { const b = Number(v & 0x7fn); v >>= 7n; if ((v === 0n && !(b & 0x40)) || (v === -1n && b & 0x40)) { o.push(b); return o; } o.push(b | 0x80); } };
  const body = (code) => [...u(code.length + 1), 0, ...code];
  const code = vec([
    body([0x0b]),
    body([0x41, ...u(1024), 0x0b]),
    // if (op == 0) unreachable; return packed
    body([0x20, 0, 0x45, 0x04, 0x40, 0x00, 0x0b, 0x42, ...sleb(packed), 0x0b]),
  ]);
  const data = vec([[0, 0x41, 16, 0x0b, ...u(answer.length), ...answer]]);
  return new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, ...sec(1, types), ...sec(3, funcs), ...sec(5, mem), ...sec(7, exps), ...sec(10, code), ...sec(11, data)]);
}
