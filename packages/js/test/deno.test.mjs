// deno.test.mjs: the package under Deno (the lockfile's deno), running
// test/runtime/check.js: every golden request by preset name, byte for
// byte, bad input as typed exceptions, validate, the presets. The module
// is read from the package's default location with Deno's file API.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkCount } from "./runtime/check.js";
import { cases, pkg } from "./helpers.mjs";

test("deno: the runtime checks", (t) => {
  // DENO_DIR in a temp dir: nothing is fetched, nothing written to $HOME.
  const denoDir = mkdtempSync(join(tmpdir(), "ctxgate-js-deno-"));
  t.after(() => rmSync(denoDir, { recursive: true, force: true }));
  const r = spawnSync(`${pkg}/node_modules/.bin/deno`, ["run", "--quiet", "--allow-read", "--allow-env", "test/runtime/deno.ts"], {
    cwd: pkg,
    env: { ...process.env, DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    encoding: "utf8",
    timeout: 300000,
  });
  const out = r.stdout + r.stderr;
  console.log(out.trim());
  assert.equal(r.status, 0, out);
  const m = /deno: (\d+) passed, (\d+) failed/.exec(out);
  assert.ok(m, out);
  assert.deepEqual([Number(m[1]), Number(m[2])], [checkCount(cases.length), 0]);
});
