// workerd.test.mjs: the package inside workerd (test/runtime/package-lock.json's workerd),
// as a Worker that imports the module and dist/ (test/runtime/worker.js,
// workerd.capnp): every golden request gives the golden bytes, bad input
// the error JSON with its status and exception class, unknown presets a
// PolicyError. workerd runs on a port the OS picked (retried if taken
// before it binds) and is stopped by its pid.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { BAD_INPUTS, checkError, checkGolden } from "../../../examples/edge/golden.js";
import { cases, pkg, runtimes } from "./helpers.mjs";

let workerd, base, log = "";
let passed = 0; // checks that held, reported as "workerd: N passed" like the other runtimes

async function freePort() {
  return new Promise((res) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => res(p));
    });
  });
}

async function start() {
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    log = "";
    const child = spawn(`${runtimes}/.bin/workerd`, ["serve", `${pkg}/test/runtime/workerd.capnp`, "--socket-addr", `http=127.0.0.1:${port}`], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (d) => (log += d));
    child.stderr.on("data", (d) => (log += d));
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 300 && child.exitCode === null; i++) {
      try {
        const r = await fetch(`${url}/describe`, { method: "POST", signal: AbortSignal.timeout(2000) });
        if (r.ok) return { child, url };
      } catch {
        // not up yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill("SIGKILL");
    if (!/Address already in use/.test(log)) break;
  }
  throw new Error(`workerd did not start:\n${log}`);
}

before(async () => {
  ({ child: workerd, url: base } = await start());
});
after(async () => {
  console.log(`workerd: ${passed} passed`);
  if (workerd && workerd.exitCode === null) {
    const exited = new Promise((r) => workerd.once("exit", r));
    workerd.kill("SIGTERM");
    const t = setTimeout(() => workerd.kill("SIGKILL"), 10000);
    await exited;
    clearTimeout(t);
  }
});

const post = async (path, body) => {
  const r = await fetch(base + path, { method: "POST", body, signal: AbortSignal.timeout(10000) });
  return { status: r.status, cls: r.headers.get("x-ctxgate-error-class"), body: new Uint8Array(await r.arrayBuffer()) };
};

test("workerd: every golden request, policy by preset name, byte for byte", async () => {
  const r = await checkGolden(cases, async (policy, request) => {
    const res = await post(`/evaluate?policy=${policy}`, request);
    return res.status === 200 ? { ok: true, body: res.body } : { ok: false, status: res.status, body: res.body };
  });
  assert.deepEqual(r.failures, []);
  assert.equal(r.passed, cases.length);
  passed += r.passed;
});

test("workerd: bad input, the error JSON and its exception class", async () => {
  for (const bad of BAD_INPUTS) {
    const r = await post("/evaluate", bad.body);
    assert.deepEqual(checkError(bad, r.status, r.body), [], bad.name);
    assert.equal(r.cls, bad.code === "limit" ? "LimitError" : "BadRequestError", bad.name);
    passed++;
  }
});

test("workerd: validate, describe and an unknown preset", async () => {
  const v = JSON.parse(new TextDecoder().decode((await post("/validate", JSON.stringify({ answer: "Yes [S1]. No [S4].", tags: ["S1"] }))).body));
  assert.deepEqual([v.cited, v.unknown], [["S1"], ["S4"]]);
  passed++;
  const d = JSON.parse(new TextDecoder().decode((await post("/describe?policy=rag-confidence")).body));
  assert.equal(d.policy.name, "rag-confidence");
  passed++;
  const bad = await post("/describe?policy=strict");
  assert.equal(bad.status, 422);
  assert.equal(bad.cls, "PolicyError");
  assert.equal(JSON.parse(new TextDecoder().decode(bad.body)).error.field, "policy");
  passed++;
});
