// helpers.mjs: what the Node tests share: the repository's paths, the
// golden cases (examples/edge/golden.js, the harness every JavaScript host
// runs), the package's Gate as a golden `decide`, and a real
// `ctxgate serve` on an ephemeral port.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { goldenCases } from "../../../examples/edge/golden.js";

export const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const root = process.env.CTXGATE_ROOT || resolve(pkg, "../..");
export const ctxgateBin = process.env.CTXGATE_BIN || `${root}/bin/ctxgate`;
/** test/runtime/node_modules: Deno, workerd and playwright-core, from their own lockfile (not the package's). */
export const runtimes = `${pkg}/test/runtime/node_modules`;

export const io = {
  readBytes: (p) => new Uint8Array(readFileSync(p)),
  readText: (p) => readFileSync(p, "utf8"),
  listDir: (p) => readdirSync(p),
};

export const cases = await goldenCases(io, root);
export const policies = [...new Set(cases.map((c) => c.policy))];
export const text = (b) => new TextDecoder().decode(b);

/** A golden `decide` over gates (policy name -> Gate): bytes, or the error as the hosts report it. */
export function decideWith(gateFor) {
  return async (policy, request) => {
    const gate = await gateFor(policy);
    try {
      return { ok: true, body: gate.evaluateBytes(request) };
    } catch (err) {
      return { ok: false, status: err.status, body: new TextEncoder().encode(err.body ?? String(err)) };
    }
  };
}

/**
 * startServe runs `bin/ctxgate serve` on 127.0.0.1:0 with args and
 * resolves when it prints the address it listens on. stop() sends SIGTERM
 * to that process (by its pid) and waits for it.
 */
export function startServe(args = [], { timeoutMs = 30000 } = {}) {
  const child = spawn(ctxgateBin, ["serve", "--listen", "127.0.0.1:0", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  const exited = new Promise((res) => child.once("exit", res));
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`ctxgate serve did not start within ${timeoutMs} ms:\n${log}`));
    }, timeoutMs);
    const onData = (d) => {
      log += d;
      // "listening on http://127.0.0.1:PORT" (or a structured line with the address).
      const m = /listening\b[^\n]*?127\.0\.0\.1:(\d+)/i.exec(log);
      if (!m) return;
      clearTimeout(timer);
      resolvePromise({
        url: `http://127.0.0.1:${m[1]}`,
        log: () => log,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
          const t = setTimeout(() => child.kill("SIGKILL"), 10000);
          await exited;
          clearTimeout(t);
        },
      });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`ctxgate serve exited with ${code}:\n${log}`));
    });
  });
}

/** A golden decision as the typed API gives it: warnings [] when the JSON has none. */
export function typedDecision(bytes) {
  const d = JSON.parse(text(bytes));
  if (!d.error) d.warnings ??= [];
  return d;
}

/**
 * chunkCases: the golden cases given as `chunks` (a framework retrieves a
 * list) that decide (not the golden errors), each with its parsed request,
 * the request's other members (for the components' request option) and
 * its decision.
 */
export const chunkCases = cases
  .map((c) => {
    const { query, chunks, ...extra } = JSON.parse(text(c.request));
    return { ...c, query, chunks, extra, decision: typedDecision(c.want) };
  })
  .filter((c) => Array.isArray(c.chunks) && !c.decision.error);

/** What a component must return for a decision: the kept chunks in S order, none for refuse and fallback. */
export function expectedKept(decision) {
  if (decision.action !== "inject" && decision.action !== "caveat") return [];
  return decision.chunks.filter((c) => c.kept).map((c) => ({ id: c.id, tag: c.tag, score: c.score, reason: c.reason }));
}

/** A golden chunk's members other than its id and text: what a retriever would put in metadata. */
export function chunkMetadata(chunk) {
  const { id: _id, text: _text, ...rest } = chunk;
  return rest;
}

/** The Gate for each preset, made once per test file. */
export function gatesByPolicy(Gate) {
  const gates = new Map();
  return async (policy) => {
    if (!gates.has(policy)) gates.set(policy, await Gate.create({ policy }));
    return gates.get(policy);
  };
}

/**
 * wordVector: a bag-of-words embedding (256 hashed buckets, stop words
 * left out). Texts that
 * share words are close, so the frameworks' real vector stores give
 * meaningful similarities without a model.
 */
const STOP = new Set("a an and are as at be by can do does for from how i in is it my of on or the then to what when where which who why with you your".split(" "));
export function wordVector(t) {
  const v = new Array(256).fill(0);
  for (const w of t.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    if (STOP.has(w)) continue;
    let h = 2166136261;
    for (const ch of w) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
    v[(h >>> 0) % 256] += 1;
  }
  return v;
}

/** A small knowledge base: [doc id, title, text]. */
export const KB = [
  ["kb/security", "Reset your password", "Reset your password in Settings, Security: Reset password."],
  ["kb/sso", "Single sign-on", "Accounts that sign in with single sign-on cannot reset a password here: ask your identity provider."],
  ["kb/billing", "Invoices", "Invoices are issued on the first day of each month and can be downloaded from the Billing page."],
  ["kb/export", "Export data", "Export your workspace as a ZIP archive from Settings, then Data, then Export."],
];
export const ANSWERABLE = "How do I reset my password?";
export const OFF_TOPIC = "What is the refund policy for annual plans?";

/** The first fenced block of lang after heading in the README. */
export function readmeBlock(heading, lang) {
  const readme = readFileSync(join(pkg, "README.md"), "utf8");
  const at = readme.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `README.md has no ${heading}`);
  const m = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(readme.slice(at));
  assert.ok(m, `README.md has no ${lang} block under ${heading}`);
  return m[1];
}
