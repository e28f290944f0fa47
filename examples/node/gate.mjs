// gate.mjs: decide one request with the gate module under Node.
//
//   node examples/node/gate.mjs [--policy policies/wikigr.json] [request.json]
//
// Reads the request from the file or stdin and prints the decision JSON, the
// module's bytes unchanged (the Go runner's bytes). Bad input prints the
// error JSON to stderr and exits 1. CTXGATE_WASM overrides the module path.
// The SDK's browser build (a JavaScript WASI shim): the Worker's build, and
// about 5x faster per call under Node than the Node build over node:wasi
// (docs/edge.md); check.mjs checks both against the golden files.
import createPlugin from "../node_modules/@extism/extism/dist/browser/mod.js";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Gate } from "../edge/ctxgate.js";

// A closed pipe (| head) ends the output, not with a stack trace.
process.stdout.on("error", (err) => process.exit(err.code === "EPIPE" ? 0 : 1));

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const args = process.argv.slice(2);
let policy = "";
const i = args.indexOf("--policy");
if (i >= 0) {
  if (!args[i + 1]) usage();
  policy = readFileSync(args[i + 1], "utf8");
  args.splice(i, 2);
}
if (args.length > 1 || args.some((a) => a.startsWith("-") && a !== "-")) usage();
const request = readFileSync(args[0] && args[0] !== "-" ? args[0] : 0);

const wasm = new WebAssembly.Module(readFileSync(process.env.CTXGATE_WASM || `${root}/host/wasm/ctxgate.wasm`));
const gate = await Gate.create(createPlugin, wasm, policy);
const r = await gate.evaluate(request);
await gate.close();
if (!r.ok) {
  process.stderr.write(r.body);
  process.stderr.write("\n");
  process.exit(1);
}
process.stdout.write(r.body);
process.stdout.write("\n");

function usage() {
  console.error("usage: node gate.mjs [--policy policy.json] [request.json | -]");
  process.exit(2);
}
