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
import { execFileSync, spawnSync } from "node:child_process";
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
// gate.mjs with good and bad command lines: a decision, or one line on
// stderr (never a stack trace) and ctxgate's exit codes (1 bad input or an
// unreadable file, 2 a bad command line).
{
  const gateCli = fileURLToPath(new URL("gate.mjs", import.meta.url));
  const reqFile = `${root}/testdata/requests/default/inject.json`;
  const env = { ...process.env, CTXGATE_WASM: wasmPath, NODE_NO_WARNINGS: "1" };
  const cliCases = [
    { name: "preset", args: ["--policy", "support-agent", reqFile], status: 0, stdout: '"name":"support-agent"' },
    { name: "flag after the file", args: [reqFile, "--policy", "wikigr"], status: 0, stdout: '"name":"wikigr"' },
    { name: "--policy=", args: [reqFile, "--policy=rag-confidence"], status: 0, stdout: '"name":"rag-confidence"' },
    { name: "policy file", args: ["--policy", `${root}/policies/wikigr.json`, reqFile], status: 0, stdout: '"name":"wikigr"' },
    { name: "stdin", args: ["-"], input: readFileSync(reqFile), status: 0, stdout: '"name":"default"' },
    { name: "help", args: ["-h"], status: 0, stdout: "usage: node gate.mjs" },
    { name: "unknown preset", args: ["--policy", "strict", reqFile], status: 1, stderr: 'unknown policy "strict": no preset and no file of that name (presets: default, ' },
    { name: "missing policy file", args: ["--policy", "conf/strict.json", reqFile], status: 1, stderr: "policy file conf/strict.json does not exist" },
    { name: "policy directory", args: ["--policy", `${root}/policies`, reqFile], status: 1, stderr: `policy ${root}/policies is a directory, not a policy file` },
    { name: "missing request", args: ["no-such-request.json"], status: 1, stderr: "cannot read the request no-such-request.json: no such file" },
    { name: "missing module", args: [reqFile], env: { CTXGATE_WASM: "/no/such/module.wasm" }, status: 1, stderr: "cannot read the module /no/such/module.wasm: no such file" },
    { name: "--policy without a value", args: ["--policy"], status: 2, stderr: "--policy needs a value" },
    { name: "unknown flag", args: ["--frob", reqFile], status: 2, stderr: "unknown flag --frob" },
    { name: "two requests", args: [reqFile, reqFile], status: 2, stderr: "one request at most" },
  ];
  for (const c of cliCases) {
    const r = spawnSync(process.execPath, [gateCli, ...c.args], {
      input: c.input ?? "", env: { ...env, ...c.env }, timeout: 30000, encoding: "utf8",
    });
    const problems = [];
    if (r.status !== c.status) problems.push(`exit ${r.status}, want ${c.status}`);
    if (c.stdout && !r.stdout.includes(c.stdout)) problems.push(`stdout lacks ${c.stdout}: ${r.stdout.slice(0, 120)}`);
    if (c.stderr && !r.stderr.startsWith("gate.mjs: " + c.stderr)) problems.push(`stderr ${JSON.stringify(r.stderr)}, want "gate.mjs: ${c.stderr}..."`);
    if (c.status === 0 && r.stderr) problems.push(`stderr ${JSON.stringify(r.stderr)}`);
    // One line (plus the usage line for exit 2), no stack trace.
    const lines = r.stderr.split("\n").filter(Boolean);
    if (lines.length > (c.status === 2 ? 2 : 1) || /^\s+at |node:internal|\^/m.test(r.stderr)) problems.push(`not a clean error: ${JSON.stringify(r.stderr)}`);
    if (problems.length) { failed++; failures.push(`gate.mjs ${c.name}: ${problems.join("; ")}`); } else passed++;
  }
  // Bad input: the module's error JSON on stderr, exit 1.
  const r = spawnSync(process.execPath, [gateCli], { input: '{"query":1}', env, timeout: 30000 });
  const problems = checkError({ status: 1, code: "bad_field", field: "query" }, r.status, new Uint8Array(r.stderr));
  if (problems.length) { failed++; failures.push("gate.mjs bad input: " + problems.join("; ")); } else passed++;
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
