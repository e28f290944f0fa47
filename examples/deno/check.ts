// check.ts: the golden check under Deno. Every golden request through the
// module, byte-compared with the golden decision (the Go runner's bytes);
// malformed requests must give the error JSON; server.ts's handler is
// driven with real Request objects; then a short timing loop, reported,
// never asserted.
//
//   deno run --allow-read --allow-env --allow-write=/dev/null examples/deno/check.ts
//
// The golden check runs twice: with the SDK's build Deno resolves for
// "@extism/extism" (its Node build, over node:wasi, which opens /dev/null
// for the guest's stdio: hence --allow-write=/dev/null) and with its browser
// build (a JavaScript WASI shim, the one the Worker runs), which needs no
// file access at all.
//
// Prints "deno: N passed, M failed" and exits 1 on any failure.
// CTXGATE_ROOT points at another checkout (testdata, policies, host/wasm).
import createPlugin from "@extism/extism";
import createBrowserPlugin from "../node_modules/@extism/extism/dist/browser/mod.js";
import { Gate } from "../edge/ctxgate.js";
import { BAD_INPUTS, checkError, checkGolden, equalBytes, goldenCases, summary, text } from "../edge/golden.js";
import { timeEvaluate } from "../edge/timing.js";
import { makeHandler } from "./server.ts";

const root = Deno.env.get("CTXGATE_ROOT") ?? new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const wasmPath = Deno.env.get("CTXGATE_WASM") ?? `${root}/host/wasm/ctxgate.wasm`;
const io = {
  readBytes: (p: string) => Deno.readFile(p),
  readText: (p: string) => Deno.readTextFile(p),
  listDir: async (p: string) => {
    const names: string[] = [];
    for await (const e of Deno.readDir(p)) names.push(e.name);
    return names;
  },
};

const wasm = new WebAssembly.Module(await Deno.readFile(wasmPath));
const gates = new Map<string, Gate>();
// deno-lint-ignore no-explicit-any
async function gateWith(create: any, policy: string): Promise<Gate> {
  const key = (create === createPlugin ? "node:" : "browser:") + policy;
  if (!gates.has(key)) {
    gates.set(key, await Gate.create(create, wasm, await io.readText(`${root}/policies/${policy}.json`)));
  }
  return gates.get(key)!;
}
const gateFor = (policy: string) => gateWith(createPlugin, policy);

const cases = await goldenCases(io, root);
let passed = 0;
const failures: string[] = [];
for (const [build, create] of [["node build", createPlugin], ["browser build", createBrowserPlugin]]) {
  const res = await checkGolden(cases, async (policy: string, req: Uint8Array) => (await gateWith(create, policy)).evaluate(req));
  passed += res.passed;
  failures.push(...res.failures.map((f: string) => `${build}: ${f}`));
}
const record = (name: string, problems: string[]) => {
  if (problems.length) failures.push(`${name}: ${problems.join("; ")}`);
  else passed++;
};

const gate = await gateFor("default");
for (const bad of BAD_INPUTS) {
  const r = await gate.evaluate(bad.body);
  record(`bad input "${bad.name}"`, r.ok ? ["gave a decision"] : checkError(bad, r.status, r.body));
}

// server.ts: the Deno Deploy handler, through real Request/Response objects.
const handlers = new Map<string, (r: Request) => Promise<Response>>();
for (const c of cases) {
  if (!handlers.has(c.policy)) {
    handlers.set(c.policy, await makeHandler(wasm, await io.readText(`${root}/policies/${c.policy}.json`)));
  }
  const res = await handlers.get(c.policy)!(new Request("http://x/v1/gate", { method: "POST", body: c.request }));
  const body = new Uint8Array(await res.arrayBuffer());
  record(`server.ts ${c.policy}/${c.name}`, res.status === 200 && equalBytes(body, c.want) ? [] : [`status ${res.status}: ${text(body).slice(0, 200)}`]);
}
{
  const h = handlers.get("default")!;
  const res = await h(new Request("http://x/v1/gate", { method: "POST", body: '{"query":1}' }));
  record("server.ts bad input", checkError({ status: 422, code: "bad_field", field: "query" }, res.status, new Uint8Array(await res.arrayBuffer())));
}

for (const f of failures) console.error("FAIL " + f);
console.log(summary("deno", passed, failures.length));
if (Deno.env.get("CTXGATE_TIMING") !== "0") {
  const now = () => performance.now();
  console.log("deno (node build): " + await timeEvaluate(now, gateFor, io, root, createPlugin, wasm));
  console.log("deno (browser build): " +
    await timeEvaluate(now, (p: string) => gateWith(createBrowserPlugin, p), io, root, createBrowserPlugin, wasm));
}
for (const g of gates.values()) await g.close();
Deno.exit(failures.length ? 1 : 0);
