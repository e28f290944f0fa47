// gate.mjs: decide one request with the gate module under Node.
//
//   node examples/node/gate.mjs [--policy NAME|policy.json] [request.json | -]
//
// Reads the request from the file or stdin and prints the decision JSON, the
// module's bytes unchanged (the Go runner's bytes). --policy takes a policy
// file or a preset name (policies/NAME.json; a file of that name wins, as
// in ctxgate). Flags may come before or after the file.
//
// Exit codes, as ctxgate's: 0 a decision; 1 bad input (the error JSON on
// stderr) or a file that cannot be read (one line on stderr); 2 a bad
// command line. CTXGATE_WASM overrides the module path.
//
// The SDK's browser build (a JavaScript WASI shim): the Worker's build, and
// about 5x faster per call under Node than the Node build over node:wasi
// (docs/edge.md); check.mjs checks both against the golden files, and this
// CLI with good and bad arguments.
import createPlugin from "../node_modules/@extism/extism/dist/browser/mod.js";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Gate } from "../edge/ctxgate.js";

const USAGE = "usage: node gate.mjs [--policy NAME|policy.json] [request.json | -]";
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

// A closed pipe (| head) ends the output, not with a stack trace.
process.stdout.on("error", (err) => process.exit(err.code === "EPIPE" ? 0 : 1));

// CliError ends the program with one line on stderr and its exit code;
// anything else thrown is a bug, reported the same way (never a stack trace
// for a user to read).
class CliError extends Error {
  constructor(message, code = 1) {
    super(message);
    this.code = code;
  }
}

try {
  await main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`gate.mjs: ${err.message}\n`);
  if (err.code === 2) process.stderr.write(USAGE + "\n");
  process.exit(typeof err.code === "number" ? err.code : 1);
}

async function main(argv) {
  const { policyArg, input } = parseArgs(argv);
  const policy = policyArg === undefined ? "" : readPolicy(policyArg);
  const request = readInput(input);
  const wasmPath = process.env.CTXGATE_WASM || `${root}/host/wasm/ctxgate.wasm`;
  const wasm = new WebAssembly.Module(readFile(wasmPath, "the module", " (make build writes it; CTXGATE_WASM overrides the path)"));
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
}

// parseArgs reads --policy V (or --policy=V) anywhere, -h, and at most one
// input; "--" ends the flags.
function parseArgs(argv) {
  let policyArg;
  const positional = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (a === "-h" || a === "--help") {
      process.stdout.write(USAGE + "\n");
      process.exit(0);
    }
    if (a === "--policy" || a === "-policy") {
      if (i + 1 >= argv.length) throw new CliError("--policy needs a value", 2);
      policyArg = argv[++i];
    } else if (a.startsWith("--policy=") || a.startsWith("-policy=")) {
      policyArg = a.slice(a.indexOf("=") + 1);
    } else if (a.startsWith("-") && a !== "-") {
      throw new CliError(`unknown flag ${a}`, 2);
    } else {
      positional.push(a);
    }
  }
  if (positional.length > 1) throw new CliError(`one request at most, got ${positional[1]} too`, 2);
  if (policyArg === "") throw new CliError("--policy is empty", 2);
  return { policyArg, input: positional[0] };
}

// readPolicy: the file at that path, else the preset of that name.
function readPolicy(arg) {
  const st = statOrNull(arg);
  if (st?.isFile()) {
    const text = readFile(arg, "the policy");
    // Never the built-in default in place of a file.
    if (!text.toString().trim()) throw new CliError(`policy ${arg} is empty`);
    return text.toString();
  }
  const presets = presetNames();
  if (presets.includes(arg)) return readFileSync(`${root}/policies/${arg}.json`, "utf8");
  if (st?.isDirectory()) throw new CliError(`policy ${arg} is a directory, not a policy file`);
  if (arg.includes("/") || arg.endsWith(".json")) throw new CliError(`policy file ${arg} does not exist`);
  throw new CliError(`unknown policy "${arg}": no preset and no file of that name (presets: ${presets.join(", ")})`);
}

function presetNames() {
  try {
    return readdirSync(`${root}/policies`).filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -5)).sort();
  } catch {
    return [];
  }
}

function readInput(name) {
  if (name === undefined || name === "-") {
    try {
      return readFileSync(0);
    } catch (err) {
      throw new CliError(`cannot read the request from stdin: ${reason(err)}`);
    }
  }
  return readFile(name, "the request");
}

function readFile(path, what, hint = "") {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new CliError(`cannot read ${what} ${path}: ${reason(err)}${hint}`);
  }
}

function statOrNull(path) {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

// reason is a file error in words, without Node's "ENOENT: ..., open 'x'".
function reason(err) {
  switch (err.code) {
    case "ENOENT": return "no such file";
    case "EACCES": return "permission denied";
    case "EISDIR": return "is a directory";
    default: return err.message;
  }
}
