// deno.ts: the package under Deno (run by deno.test.mjs):
//   CTXGATE_SERVE_URL=http://127.0.0.1:PORT deno run --allow-read --allow-env --allow-net=127.0.0.1 test/runtime/deno.ts
// The module comes from the package's default location (dist/../ctxgate.wasm,
// read with Deno.readFile); with CTXGATE_SERVE_URL, the client against that
// server too. Prints "deno: N passed, M failed".
import * as pkg from "../../dist/index.js";
import { runChecks, runClientChecks } from "./check.js";

const root = Deno.env.get("CTXGATE_ROOT") ?? new URL("../../../..", import.meta.url).pathname.replace(/\/$/, "");
const io = {
  readBytes: (p: string) => Deno.readFile(p),
  readText: (p: string) => Deno.readTextFile(p),
  listDir: async (p: string) => {
    const names: string[] = [];
    for await (const e of Deno.readDir(p)) names.push(e.name);
    return names;
  },
};
const r = await runChecks({ pkg, io, root });
// CTXGATE_SERVE_URL: a ctxgate serve (default policy) for the client checks.
const serve = Deno.env.get("CTXGATE_SERVE_URL");
if (serve) {
  const c = await runClientChecks({ pkg, io, root, baseUrl: serve });
  r.passed += c.passed;
  r.failed += c.failed;
  r.failures.push(...c.failures);
}
for (const f of r.failures) console.error("FAIL " + f);
console.log(`deno: ${r.passed} passed, ${r.failed} failed`);
Deno.exit(r.failed ? 1 : 0);
