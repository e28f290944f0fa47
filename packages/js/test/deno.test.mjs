// deno.test.mjs: the package under Deno (test/runtime/package-lock.json's deno), running
// test/runtime/check.js: every golden request by preset name, byte for
// byte, bad input as typed exceptions, validate, the presets; then the
// client against a real ctxgate serve. The module is read from the
// package's default location with Deno's file API.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkCount, clientCheckCount } from "./runtime/check.js";
import { cases, pkg, runtimes, startServe } from "./helpers.mjs";

test("deno: the runtime checks, and the client against ctxgate serve", async (t) => {
  const serve = await startServe();
  t.after(() => serve.stop());
  // DENO_DIR in a temp dir: nothing is fetched, nothing written to $HOME.
  const denoDir = mkdtempSync(join(tmpdir(), "ctxgate-js-deno-"));
  t.after(() => rmSync(denoDir, { recursive: true, force: true }));
  // Asynchronous, so this process keeps draining the server's output.
  const r = await new Promise((res) => {
    execFile(`${runtimes}/.bin/deno`, ["run", "--quiet", "--allow-read", "--allow-env", "--allow-net=127.0.0.1", "test/runtime/deno.ts"], {
      cwd: pkg,
      env: { ...process.env, DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1", CTXGATE_SERVE_URL: serve.url },
      encoding: "utf8",
      timeout: 300000,
    }, (err, stdout, stderr) => res({ status: err ? (err.code ?? 1) : 0, stdout, stderr }));
  });
  const out = r.stdout + r.stderr;
  console.log(out.trim());
  assert.equal(r.status, 0, out);
  const m = /deno: (\d+) passed, (\d+) failed/.exec(out);
  assert.ok(m, out);
  const defaults = cases.filter((c) => c.policy === "default").length;
  assert.deepEqual([Number(m[1]), Number(m[2])], [checkCount(cases.length) + clientCheckCount(defaults), 0]);
});
