// package.test.mjs: the package as a user gets it. `npm pack` (scripts
// off: dist/ is built by then), the tarball's file list, then an offline
// install into an empty project: import by name resolves the exports map,
// the default module loads from the installed package, and TypeScript
// consumers type-check against the published .d.ts files, among them the
// README's OpenAI SDK example with the real openai package (tsc --strict).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cases, pkg, readmeBlock } from "./helpers.mjs";

test("npm pack: the files a user gets, and an install that works by name", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "ctxgate-js-pack-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const npm = (args, cwd) => execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120000 });
  const [info] = JSON.parse(npm(["pack", "--json", "--ignore-scripts", "--pack-destination", dir], pkg));
  const files = info.files.map((f) => f.path).sort();
  for (const f of ["LICENSE", "README.md", "ctxgate.wasm", "dist/index.js", "dist/index.d.ts", "dist/client.d.ts", "dist/langchain.js", "dist/llamaindex.d.ts", "dist/openai.d.ts", "package.json"]) {
    assert.ok(files.includes(f), `${f} is not in the package`);
  }
  assert.deepEqual(files.filter((f) => !/^(dist\/[a-z]+\.(js|d\.ts)|LICENSE|README\.md|ctxgate\.wasm|package\.json)$/.test(f)), [], "unexpected files");
  console.log(`package: ${info.filename}, ${info.size} bytes packed, ${info.unpackedSize} unpacked, ${files.length} files`);

  // An empty project installs the tarball with nothing from the network:
  // the package has no dependencies, and its framework peers are optional.
  const app = join(dir, "app");
  execFileSync("mkdir", [app]);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  npm(["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", join(dir, info.filename)], app);

  const c = cases.find((x) => x.policy === "support-agent");
  writeFileSync(join(app, "req.json"), c.request);
  writeFileSync(join(app, "main.mjs"), `
    import { readFileSync } from "node:fs";
    import { Gate, presetNames } from "@ctxgate/ctxgate";
    import { CtxgateClient } from "@ctxgate/ctxgate/client";
    const gate = await Gate.create({ policy: "support-agent" });
    process.stdout.write(gate.evaluateBytes(readFileSync("req.json")));
    if (typeof CtxgateClient !== "function" || presetNames.length !== 5) process.exit(3);
  `);
  const out = execFileSync(process.execPath, ["main.mjs"], { cwd: app, timeout: 60000 });
  assert.equal(Buffer.compare(out, Buffer.from(c.want)), 0, "the installed package's decision differs from the golden bytes");

  // A TypeScript consumer, strict, against the installed types.
  writeFileSync(join(app, "main.ts"), `
    import { Gate, CtxgateError, type Decision, type GateRequest } from "@ctxgate/ctxgate";
    import { CtxgateClient, type GateResponse } from "@ctxgate/ctxgate/client";
    const req: GateRequest = { query: "q", chunks: [{ id: "a", text: "t", scores: { vector: 0.9, bm25: 3 } }] };
    export async function f(): Promise<[Decision, GateResponse | undefined]> {
      const gate = await Gate.create({ policy: "wikigr" });
      const d: Decision = gate.evaluate(req);
      const tag: string | undefined = d.chunks[0]?.tag;
      const client = new CtxgateClient({ baseUrl: "http://127.0.0.1:8080", timeoutMs: 500 });
      try { return [d, await client.gate(req)]; } catch (e) { if (e instanceof CtxgateError) console.log(e.code, e.field, tag); return [d, undefined]; }
    }
  `);
  // The README's OpenAI SDK example, verbatim, with the SDK the package is
  // built against (from npm's cache: npm ci fetched it).
  writeFileSync(join(app, "openai.ts"), readmeBlock("## The OpenAI SDK, through `ctxgate serve`", "ts"));
  const { openai } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).devDependencies;
  npm(["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", `openai@${openai}`], app);
  writeFileSync(join(app, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, module: "nodenext", moduleResolution: "nodenext", target: "ES2022", lib: ["ES2022", "DOM"], types: [], noEmit: true }, files: ["main.ts", "openai.ts"] }));
  try {
    execFileSync(`${pkg}/node_modules/.bin/tsc`, ["-p", app], { stdio: "pipe", timeout: 60000 });
  } catch (err) {
    throw new Error(`tsc --strict rejected the consumers:\n${err.stdout}${err.stderr}`);
  }
});

