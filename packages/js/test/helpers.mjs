// helpers.mjs: what the Node tests share: the repository's paths, the
// golden cases (examples/edge/golden.js, the harness every JavaScript host
// runs), the package's Gate as a golden `decide`, and a real
// `ctxgate serve` on an ephemeral port.
import { spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { goldenCases } from "../../../examples/edge/golden.js";

export const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const root = process.env.CTXGATE_ROOT || resolve(pkg, "../..");
export const ctxgateBin = process.env.CTXGATE_BIN || `${root}/bin/ctxgate`;

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
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(log);
      if (!m) return;
      clearTimeout(timer);
      resolvePromise({
        url: m[1],
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
