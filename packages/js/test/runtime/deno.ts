// deno.ts: the package under Deno (run by deno.test.mjs):
//   deno run --allow-read test/runtime/deno.ts
// The module comes from the package's default location (dist/../ctxgate.wasm,
// read with Deno.readFile). Prints "deno: N passed, M failed".
import * as pkg from "../../dist/index.js";
import { runChecks } from "./check.js";

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
for (const f of r.failures) console.error("FAIL " + f);
console.log(`deno: ${r.passed} passed, ${r.failed} failed`);
Deno.exit(r.failed ? 1 : 0);
