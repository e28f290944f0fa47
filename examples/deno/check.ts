// check.ts: the golden check under Deno. Every golden request through the
// module, byte-compared with the golden decision (the Go runner's bytes);
// malformed requests must give the error JSON; server.ts's handler is
// driven with real Request objects and started as a program with bad and
// good settings (hence --allow-run, and --allow-net for its port); then a
// short timing loop, reported, never asserted.
//
//   deno run --allow-read --allow-env --allow-write=/dev/null --allow-run --allow-net=127.0.0.1 examples/deno/check.ts
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
import { BAD_INPUTS, checkError, checkGolden, equalBytes, goldenCases, goldenErrorCode, STATUS, summary, text } from "../edge/golden.js";
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
  const code = goldenErrorCode(c.want);
  const status = code ? STATUS[code] : 200;
  record(`server.ts ${c.policy}/${c.name}`, res.status === status && equalBytes(body, c.want) ? [] : [`status ${res.status}: ${text(body).slice(0, 200)}`]);
}
{
  const h = handlers.get("default")!;
  const res = await h(new Request("http://x/v1/gate", { method: "POST", body: '{"query":1}' }));
  record("server.ts bad input", checkError({ status: 422, code: "bad_field", field: "query" }, res.status, new Uint8Array(await res.arrayBuffer())));
}

// server.ts as an operator starts it, with bad and good settings: a bad
// one ends it with one line on stderr (no stack trace) and exit 2 (a bad
// PORT or argument) or 1 (a file it cannot read, a port it cannot bind);
// good ones serve /healthz and /v1/gate.
{
  const serverPath = new URL("./server.ts", import.meta.url).pathname;
  const examples = new URL("..", import.meta.url).pathname;
  const run = (env: Record<string, string>, args: string[] = []) =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--allow-read", "--allow-env", "--allow-net=127.0.0.1", serverPath, ...args],
      cwd: examples, env: { CTXGATE_WASM: wasmPath, HOST: "127.0.0.1", ...env },
      stdin: "null", stdout: "piped", stderr: "piped",
    });
  const busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const busyPort = String((busy.addr as Deno.NetAddr).port);
  for (const c of [
    { name: "bad PORT", env: { PORT: "http" }, code: 2, stderr: 'PORT must be a port number (0-65535), got "http"' },
    { name: "PORT out of range", env: { PORT: "70000" }, code: 2, stderr: "PORT must be a port number" },
    { name: "an argument", env: { PORT: "0" }, args: ["--policy"], code: 2, stderr: "takes no arguments, got --policy" },
    { name: "missing policy file", env: { PORT: "0", CTXGATE_POLICY_FILE: "/no/such/policy.json" }, code: 1, stderr: "cannot read CTXGATE_POLICY_FILE /no/such/policy.json: no such file" },
    { name: "missing module", env: { PORT: "0", CTXGATE_WASM: "/no/such/module.wasm" }, code: 1, stderr: "cannot read the module /no/such/module.wasm: no such file" },
    { name: "port in use", env: { PORT: busyPort }, code: 1, stderr: `cannot listen on 127.0.0.1:${busyPort}` },
  ]) {
    const r = await run(c.env, c.args).output();
    const stderr = text(r.stderr);
    const problems: string[] = [];
    if (r.code !== c.code) problems.push(`exit ${r.code}, want ${c.code}`);
    if (!stderr.startsWith("server.ts: " + c.stderr)) problems.push(`stderr ${JSON.stringify(stderr)}`);
    if (stderr.trim().split("\n").length > 1 || /^\s+at /m.test(stderr)) problems.push(`not one clean line: ${JSON.stringify(stderr)}`);
    record(`server.ts ${c.name}`, problems);
  }
  busy.close();

  // Good settings: a preset's policy file on an ephemeral port.
  const child = run({ PORT: "0", CTXGATE_POLICY_FILE: `${root}/policies/wikigr.json` }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const deadline = Date.now() + 30000;
  while (!out.includes("listening on ") && Date.now() < deadline) {
    const { value, done } = await lines.read();
    if (done) break;
    out += value;
  }
  const base = out.match(/listening on (http:\/\/[^/\s]+)/)?.[1];
  const problems: string[] = [];
  if (!base) {
    problems.push(`did not start: ${JSON.stringify(out)}`);
  } else {
    const health = await fetch(base + "/healthz");
    if ((await health.text()) !== "ok\n") problems.push(`/healthz ${health.status}`);
    const res = await fetch(base + "/v1/gate", { method: "POST", body: await Deno.readFile(`${root}/testdata/requests/default/inject.json`) });
    const body = await res.text();
    if (res.status !== 200 || !body.includes('"name":"wikigr"')) problems.push(`/v1/gate ${res.status}: ${body.slice(0, 120)}`);
  }
  try {
    child.kill("SIGTERM");
  } catch {
    // it has exited already (a failed start, reported above)
  }
  await lines.cancel();
  await child.stderr.cancel();
  await child.status;
  record("server.ts starts with good settings", problems);
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
