// check.js: the in-process checks every runtime runs the same way (Deno
// and Chromium import this file; workerd gets the same golden cases over
// HTTP from workerd.test.mjs). Nothing runtime-specific: the caller passes
// the package's exports, its file access (io, as in examples/edge/golden.js)
// and, where the runtime needs one, the module.
//
//   runChecks({ pkg, io, root, module? }) -> { passed, failed, failures }
import { BAD_INPUTS, checkError, checkGolden, goldenCases } from "../../../../examples/edge/golden.js";

export async function runChecks({ pkg, io, root, module }) {
  const { Gate, CtxgateError, BadRequestError, LimitError, PolicyError, presetNames } = pkg;
  const gates = new Map();
  const gateFor = async (policy) => {
    if (!gates.has(policy)) gates.set(policy, await Gate.create(module ? { module, policy } : { policy }));
    return gates.get(policy);
  };
  let passed = 0;
  const failures = [];
  const record = (name, problems) => {
    if (problems.length) failures.push(`${name}: ${problems.join("; ")}`);
    else passed++;
  };

  // 1. Every golden request, policy by preset name: the golden bytes.
  const cases = await goldenCases(io, root);
  const golden = await checkGolden(cases, async (policy, request) => {
    const gate = await gateFor(policy);
    try {
      return { ok: true, body: gate.evaluateBytes(request) };
    } catch (err) {
      return { ok: false, status: err.status, body: new TextEncoder().encode(err.body ?? String(err)) };
    }
  });
  passed += golden.passed;
  failures.push(...golden.failures);

  // 2. Bad input: the error JSON, as the right exception class.
  const gate = await gateFor("default");
  for (const bad of BAD_INPUTS) {
    let err;
    try {
      gate.evaluateBytes(bad.body);
    } catch (e) {
      err = e;
    }
    if (!(err instanceof CtxgateError)) {
      record(`bad input "${bad.name}"`, [`no CtxgateError: ${err}`]);
      continue;
    }
    const p = checkError(bad, err.status, new TextEncoder().encode(err.body));
    const want = bad.code === "limit" ? LimitError : BadRequestError;
    if (!(err instanceof want)) p.push(`${err.name}, want ${want.name}`);
    if (err.code !== bad.code || err.field !== bad.field) p.push(`code ${err.code} field ${err.field}`);
    record(`bad input "${bad.name}"`, p);
  }

  // 3. The answer check, the presets, an unknown preset.
  {
    const v = gate.validate({ answer: "Open Settings [S1]. Then [S9].", tags: ["S1"] });
    record("validate", v.cited.join() === "S1" && v.unknown.join() === "S9" && v.soft_refusal === false ? [] : [JSON.stringify(v)]);
  }
  {
    const policies = [...new Set(cases.map((c) => c.policy))];
    const names = [];
    for (const p of presetNames) names.push((await gateFor(p)).describe().policy.name);
    record("presets", names.join() === policies.join() ? [] : [`described ${names.join()}, want ${policies.join()}`]);
  }
  {
    let err;
    try {
      await Gate.create(module ? { module, policy: "strict" } : { policy: "strict" });
    } catch (e) {
      err = e;
    }
    record("unknown preset", err instanceof PolicyError && /presets: default/.test(err.message) ? [] : [`got ${err}`]);
  }
  for (const g of gates.values()) g.close();
  return { passed, failed: failures.length, failures };
}

/** The number of checks runChecks makes for n golden cases. */
export const checkCount = (n) => n + BAD_INPUTS.length + 3;

/**
 * runClientChecks: CtxgateClient against a real ctxgate serve (default
 * policy) at baseUrl: every default golden request gives the golden bytes
 * with a decision id, a bad field and an unknown decision id are their
 * typed errors, validate works with the id.
 */
export async function runClientChecks({ pkg, io, root, baseUrl }) {
  const { CtxgateClient, BadRequestError, NotFoundError } = pkg;
  const client = new CtxgateClient({ baseUrl, timeoutMs: 10000 });
  const cases = (await goldenCases(io, root)).filter((c) => c.policy === "default");
  let passed = 0;
  const failures = [];
  const golden = await checkGolden(cases, async (_, request) => {
    let res;
    try {
      res = await client.gate(request);
    } catch (e) {
      if (e instanceof BadRequestError) return { ok: false, status: e.status, body: new TextEncoder().encode(e.body) };
      throw e;
    }
    if (!res.decisionId || res.headers.action !== res.decision.action) throw new Error(`no decision id or headers: ${JSON.stringify(res.headers)}`);
    return { ok: true, body: res.raw };
  });
  passed += golden.passed;
  failures.push(...golden.failures.map((f) => "client: " + f));
  const expect = async (name, p, check) => {
    try {
      await p;
      failures.push(`client: ${name}: no error`);
    } catch (e) {
      if (check(e)) passed++;
      else failures.push(`client: ${name}: ${e && e.name} ${e && e.message}`);
    }
  };
  await expect("bad field", client.gate('{"query":"q","chunks":[{"text":"a","scores":{"bm25":-1}}]}'),
    (e) => e instanceof BadRequestError && e.status === 422 && e.field === "chunks[0].scores.bm25");
  await expect("unknown decision id", client.feedback("no-such-id", "down"), (e) => e instanceof NotFoundError && e.status === 404);
  const { decisionId } = await client.gate(cases[0].request);
  const v = await client.validate({ answer: "Yes [S1]. No [S3].", tags: ["S1"] }, { decisionId });
  if (v.cited.join() === "S1" && v.unknown.join() === "S3") passed++;
  else failures.push(`client: validate: ${JSON.stringify(v)}`);
  return { passed, failed: failures.length, failures };
}

/** The number of checks runClientChecks makes for n default golden cases. */
export const clientCheckCount = (n) => n + 3;
