// check.mjs: the golden check under Node. Every golden request through the
// module, byte-compared with the golden decision (the Go runner's bytes);
// malformed requests must give the error JSON; then a short timing loop
// whose result is reported, never asserted.
//
//   node examples/node/check.mjs          (CTXGATE_WASM overrides the module)
//
// The golden check runs with both builds of the SDK: its Node build (over
// node:wasi, what "@extism/extism" resolves to) and its browser build (a
// JavaScript WASI shim, what the Worker runs).
//
// Prints "node: N passed, M failed" and exits 1 on any failure.
import createPlugin from "@extism/extism";
import createBrowserPlugin from "../node_modules/@extism/extism/dist/browser/mod.js";
import { execFileSync } from "node:child_process";
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
async function gateWith(create, policy) {
  const key = (create === createPlugin ? "node:" : "browser:") + policy;
  if (!gates.has(key)) {
    gates.set(key, await Gate.create(create, wasm, io.readText(`${root}/policies/${policy}.json`)));
  }
  return gates.get(key);
}
const gateFor = (policy) => gateWith(createPlugin, policy);

const cases = await goldenCases(io, root);
let passed = 0;
let failed = 0;
const failures = [];
for (const [build, create] of [["node build", createPlugin], ["browser build", createBrowserPlugin]]) {
  const res = await checkGolden(cases, async (policy, req) => (await gateWith(create, policy)).evaluate(req));
  passed += res.passed;
  failed += res.failed;
  failures.push(...res.failures.map((f) => `${build}: ${f}`));
}

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

// The CLI, as a user runs it: one golden case per policy, compared with the
// golden bytes (plus the newline it prints), and one bad request.
for (const policy of [...new Set(cases.map((c) => c.policy))]) {
  const c = cases.find((x) => x.policy === policy);
  const cli = [fileURLToPath(new URL("gate.mjs", import.meta.url)), "--policy", `${root}/policies/${policy}.json`];
  const env = { ...process.env, CTXGATE_WASM: wasmPath, NODE_NO_WARNINGS: "1" };
  const out = execFileSync(process.execPath, cli, { input: c.request, env, timeout: 30000 });
  if (Buffer.compare(out, Buffer.concat([c.want, Buffer.from("\n")])) === 0) passed++;
  else { failed++; failures.push(`gate.mjs ${policy}/${c.name}: output differs from the golden file`); }
}
{
  const cli = [fileURLToPath(new URL("gate.mjs", import.meta.url))];
  const env = { ...process.env, CTXGATE_WASM: wasmPath, NODE_NO_WARNINGS: "1" };
  try {
    execFileSync(process.execPath, cli, { input: '{"query":1}', env, timeout: 30000, stdio: ["pipe", "pipe", "pipe"] });
    failed++;
    failures.push("gate.mjs bad input: exit 0");
  } catch (err) {
    const problems = checkError({ status: 1, code: "bad_field", field: "query" }, err.status, new Uint8Array(err.stderr));
    if (problems.length) { failed++; failures.push("gate.mjs bad input: " + problems.join("; ")); } else passed++;
  }
}

for (const f of failures) console.error("FAIL " + f);
console.log(summary("node", passed, failed));
if (process.env.CTXGATE_TIMING !== "0") {
  const now = () => performance.now();
  console.log("node (node build): " + (await timeEvaluate(now, gateFor, io, root, createPlugin, wasm)));
  console.log("node (browser build): " +
    (await timeEvaluate(now, (p) => gateWith(createBrowserPlugin, p), io, root, createBrowserPlugin, wasm)));
}
for (const g of gates.values()) await g.close();
process.exit(failed ? 1 : 0);
