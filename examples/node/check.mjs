// check.mjs: the golden check under Node. Every golden request through the
// module, byte-compared with the golden decision (the Go runner's bytes);
// malformed requests must give the error JSON; then a short timing loop
// whose result is reported, never asserted.
//
//   node examples/node/check.mjs          (CTXGATE_WASM overrides the module)
//
// Prints "node: N passed, M failed" and exits 1 on any failure.
import createPlugin from "@extism/extism";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Gate } from "../edge/ctxgate.js";
import { BAD_INPUTS, checkError, checkGolden, goldenCases, summary } from "../edge/golden.js";
import { timeEvaluate } from "../edge/timing.js";

// CTXGATE_ROOT points at another checkout (testdata, policies, host/wasm).
const root = process.env.CTXGATE_ROOT || resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const wasmPath = process.env.CTXGATE_WASM || `${root}/host/wasm/ctxgate.wasm`;
const io = {
  readBytes: (p) => new Uint8Array(readFileSync(p)),
  readText: (p) => readFileSync(p, "utf8"),
  listDir: (p) => readdirSync(p),
};

const wasm = new WebAssembly.Module(readFileSync(wasmPath));
const gates = new Map();
async function gateFor(policy) {
  if (!gates.has(policy)) {
    gates.set(policy, await Gate.create(createPlugin, wasm, io.readText(`${root}/policies/${policy}.json`)));
  }
  return gates.get(policy);
}

const cases = await goldenCases(io, root);
const res = await checkGolden(cases, async (policy, req) => (await gateFor(policy)).evaluate(req));
let { passed, failed } = res;
const failures = [...res.failures];

const gate = await gateFor("default");
for (const bad of BAD_INPUTS) {
  const r = await gate.evaluate(bad.body);
  const problems = r.ok ? ["gave a decision"] : checkError(bad, r.status, r.body);
  if (problems.length) {
    failed++;
    failures.push(`bad input "${bad.name}": ${problems.join("; ")}`);
  } else {
    passed++;
  }
}

for (const f of failures) console.error("FAIL " + f);
console.log(summary("node", passed, failed));
if (process.env.CTXGATE_TIMING !== "0") {
  console.log("node: " + (await timeEvaluate(() => performance.now(), (p) => gateFor(p), io, root, createPlugin, wasm)));
}
for (const g of gates.values()) await g.close();
process.exit(failed ? 1 : 0);
