// check.mjs: the raw-ABI host (host.mjs, written from docs/abi.md) against
// the golden files, beside the Extism path.
//
//   node examples/abi-host/check.mjs      (CTXGATE_WASM overrides the module)
//
// 1. Every golden request through host.mjs with the minimal WASI of
//    docs/abi.md must give the golden decision's bytes.
// 2. The same with the standard-Go build over node:wasi (docs/abi.md: that
//    build needs a complete WASI).
// 3. describe, validate and the malformed requests give the bytes the
//    Extism JavaScript SDK gets from the same module, and the right codes.
// 4. Timing (reported, never asserted; CTXGATE_TIMING=0 skips it): evaluate
//    of the workload in CTXGATE_ABI_WORKLOAD (JSON lines, e.g. the 20-chunk
//    DL19 requests from `go run ./bench/cmd/workload`), else the golden
//    default/inject request, through host.mjs and through the Extism SDK's
//    two builds, taking turns call by call in one run.
//
// Prints "abi: N passed, M failed" and exits 1 on any failure.
import createPlugin from "@extism/extism";
import createBrowserPlugin from "../node_modules/@extism/extism/dist/browser/mod.js";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { WASI } from "node:wasi";
import { Gate, statusOf } from "../edge/ctxgate.js";
import { BAD_INPUTS, checkError, checkGolden, equalBytes, goldenCases, summary, text } from "../edge/golden.js";
import { RawGate } from "./host.mjs";

const root = process.env.CTXGATE_ROOT || resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const wasmPath = process.env.CTXGATE_WASM || `${root}/host/wasm/ctxgate.wasm`;
const goWasmPath = `${dirname(wasmPath)}/ctxgate-go.wasm`;
const io = {
  readBytes: (p) => new Uint8Array(readFileSync(p)),
  readText: (p) => readFileSync(p, "utf8"),
  listDir: (p) => readdirSync(p),
};
const policyJSON = (policy) => io.readText(`${root}/policies/${policy}.json`);

let passed = 0;
let failed = 0;
const failures = [];
const tally = (res, label) => {
  passed += res.passed;
  failed += res.failed;
  failures.push(...res.failures.map((f) => `${label}: ${f}`));
};
const expect = (ok, what) => {
  if (ok) passed++;
  else {
    failed++;
    failures.push(what);
  }
};
// asReply gives a raw reply the {ok, status, body} shape golden.js reads.
const asReply = (r) => (r.ok ? r : { ...r, status: statusOf(r.code) });

const cases = await goldenCases(io, root);
const wasm = new WebAssembly.Module(readFileSync(wasmPath));

// 1. The golden decisions through the raw ABI, minimal WASI.
const raw = new Map();
const rawFor = (policy) => {
  if (!raw.has(policy)) raw.set(policy, RawGate.create(wasm, { policy: policyJSON(policy) }));
  return raw.get(policy);
};
tally(await checkGolden(cases, async (policy, req) => asReply(rawFor(policy).evaluate(req))), "raw");

// 2. The standard-Go build through node:wasi.
try {
  const goWasm = new WebAssembly.Module(readFileSync(goWasmPath));
  const goGates = new Map();
  const goFor = (policy) => {
    if (!goGates.has(policy)) {
      const wasi = new WASI({ version: "preview1", args: [], env: {}, returnOnExit: false });
      goGates.set(policy, RawGate.create(goWasm, { policy: policyJSON(policy) }, { wasi }));
    }
    return goGates.get(policy);
  };
  tally(await checkGolden(cases, async (policy, req) => asReply(goFor(policy).evaluate(req))), "raw, standard-Go build, node:wasi");
} catch (err) {
  expect(false, `standard-Go build (${goWasmPath}): ${err && err.stack || err}`);
}

// 3. The same bytes as the Extism path for everything else.
const extism = await Gate.create(createBrowserPlugin, wasm, policyJSON("default"));
const gate = rawFor("default");
const same = async (what, rawReply, extismReply) => {
  const r = await extismReply;
  expect(rawReply.ok === r.ok && equalBytes(rawReply.body, r.body),
    `${what}: raw ${rawReply.ok ? "ok" : "error"} ${text(rawReply.body).slice(0, 200)}\n  extism ${r.ok ? "ok" : "error"} ${text(r.body).slice(0, 200)}`);
};
await same("describe", gate.describe(), extism.describe());
for (const answer of ['{"answer":"Rotate the key [S1].","tags":["S1"]}', '{"answer":"I cannot help.","tags":[]}', '{"answer":3}', "{"]) {
  await same(`validate ${answer}`, gate.validate(answer), extism.validate(answer));
}
for (const bad of BAD_INPUTS) {
  const r = asReply(gate.evaluate(bad.body));
  const problems = r.ok ? ["gave a decision"] : checkError(bad, r.status, r.body);
  expect(problems.length === 0, `bad input "${bad.name}": ${problems.join("; ")}`);
  await same(`bad input "${bad.name}"`, r, extism.evaluate(bad.body));
}
// A repeated request after a larger one: the input buffer is reused and
// overwritten in place, so any byte left from the larger one would show.
{
  const big = cases.reduce((a, c) => (c.request.length > a.request.length ? c : a));
  const small = cases.find((c) => c.policy === "default");
  for (const c of [big, small, small, big, small]) {
    const r = rawFor(c.policy).evaluate(c.request);
    expect(r.ok && equalBytes(r.body, c.want), `reuse ${c.policy}/${c.name}: not the golden bytes`);
  }
}
// A bad policy is bad_policy from every call, never a trap.
{
  const broken = RawGate.create(wasm, { policy: '{"name":' });
  for (const [name, r] of [["evaluate", broken.evaluate(cases[0].request)], ["validate", broken.validate("{}")], ["describe", broken.describe()]]) {
    expect(!r.ok && r.code === "bad_policy", `broken policy, ${name}: ${text(r.body).slice(0, 200)}`);
  }
}

for (const f of failures) console.error("FAIL " + f);
console.log(summary("abi", passed, failed));

// 4. Timing.
if (process.env.CTXGATE_TIMING !== "0") {
  const file = process.env.CTXGATE_ABI_WORKLOAD;
  const requests = file
    ? readFileSync(file, "utf8").split("\n").filter((l) => l !== "").map((l) => new TextEncoder().encode(l))
    : [cases.find((c) => c.policy === "default" && c.name === "inject").request];
  const label = file ? (process.env.CTXGATE_ABI_WORKLOAD_NAME || file) : "default/inject";
  const subjects = [
    ["raw ABI (host.mjs)", (req) => gate.evaluate(req)],
    ["Extism JS SDK, browser build", (req) => extism.evaluate(req)],
    ["Extism JS SDK, node build", await (async () => {
      const g = await Gate.create(createPlugin, wasm, policyJSON("default"));
      return (req) => g.evaluate(req);
    })()],
  ];
  console.log(await timeSubjects(label, requests, subjects));
}
await extism.close();
process.exit(failed ? 1 : 0);

// timeSubjects times evaluate per subject, the subjects taking turns call
// by call in a rotating order, each decides the previous request untimed
// just before its timed call (as bench/cmd/perf does), so load from other
// processes falls on all of them alike. It reports each subject's median
// and its ratio to the first's.
async function timeSubjects(label, requests, subjects) {
  const samples = 300;
  const times = subjects.map(() => []);
  for (const [, run] of subjects) for (const req of requests) await run(req);
  for (let i = 0; i < samples; i++) {
    const req = requests[i % requests.length];
    const prev = requests[(i + requests.length - 1) % requests.length];
    for (let k = 0; k < subjects.length; k++) {
      const s = (i + k) % subjects.length;
      const [name, run] = subjects[s];
      await run(prev);
      const t0 = performance.now();
      const r = await run(req);
      times[s].push((performance.now() - t0) * 1000);
      if (!r.ok) throw new Error(`${name}: ${text(r.body)}`);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const mean = requests.reduce((a, r) => a + r.length, 0) / requests.length;
  const base = median(times[0]);
  const lines = [`abi timing: evaluate ${label} (${requests.length} requests, ${Math.round(mean)} bytes on average), ` +
    `median of ${samples} calls each, interleaved:`];
  subjects.forEach(([name], s) => {
    const m = median(times[s]);
    lines.push(`  ${name.padEnd(30)} ${m.toFixed(1).padStart(8)} µs/call  x${(m / base).toFixed(2)}`);
  });
  return lines.join("\n");
}
