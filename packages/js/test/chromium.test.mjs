// chromium.test.mjs: the package in a real headless Chromium (Debian's
// chromium, driven by test/runtime/package-lock.json's playwright-core). A static server on
// an ephemeral port serves the repository; test/runtime/browser.html
// imports dist/ as ES modules, the module loads with fetch, and
// test/runtime/check.js runs as in Deno: every golden request byte for
// byte, bad input as typed exceptions, validate, the presets. No console
// error and no uncaught exception is allowed.
//
// Chromium: CTXGATE_CHROMIUM, else /usr/bin/chromium (apt-get install
// chromium; scripts/install-js-deps.sh). Playwright gives it a fresh
// temporary profile (its own --user-data-dir) and removes it after.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer, request as httpRequest } from "node:http";
import { createRequire } from "node:module";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { extname, join, normalize, sep } from "node:path";
import { checkCount, clientCheckCount } from "./runtime/check.js";
import { goldenErrorCode } from "../../../examples/edge/golden.js";
import { cases, root, runtimes, startServe } from "./helpers.mjs";

// playwright-core is installed in test/runtime (its own lockfile), not beside the package.
const { chromium } = createRequire(`${runtimes}/../package.json`)("playwright-core");

const executablePath = process.env.CTXGATE_CHROMIUM || "/usr/bin/chromium";
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json", ".wasm": "application/wasm" };

let server, base, browser, serve;

// proxy forwards /serve/... to the real ctxgate serve, so the page calls it
// from its own origin (serve sends no CORS headers).
function proxy(req, res, path) {
  const up = new URL(serve.url);
  const p = httpRequest({ host: up.hostname, port: up.port, method: req.method, path, headers: req.headers }, (r) => {
    res.writeHead(r.statusCode, r.headers);
    r.pipe(res);
  });
  p.on("error", (err) => {
    res.writeHead(502);
    res.end(String(err));
  });
  req.pipe(p);
}

// inRoot maps a URL path to a file under the repository, or null.
function inRoot(urlPath) {
  const p = normalize(join(root, decodeURIComponent(urlPath)));
  return p === root || p.startsWith(root + sep) ? p : null;
}

before(async () => {
  serve = await startServe();
  server = createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname.startsWith("/serve/")) return proxy(req, res, req.url.slice("/serve".length));
    try {
      if (url.pathname === "/__list") {
        const dir = inRoot(url.searchParams.get("path") ?? "");
        if (!dir) throw new Error("outside the repository");
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify(readdirSync(dir)));
      }
      const file = inRoot(url.pathname);
      if (!file || !existsSync(file) || !statSync(file).isFile()) {
        res.writeHead(404);
        return res.end();
      }
      res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
      res.end(readFileSync(file));
    } catch (err) {
      res.writeHead(500);
      res.end(String(err));
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    timeout: 60000,
  });
});

after(async () => {
  await browser?.close();
  await new Promise((r) => (server ? server.close(r) : r()));
  await serve?.stop();
});

test("chromium: the runtime checks and the client, with no console errors", async () => {
  const page = await browser.newPage();
  const errors = [];
  // The client checks make failing calls on purpose (the golden errors,
  // a bad field, an unknown decision id); Chromium logs each as a console
  // error ("Failed to load resource") for its URL.
  const failed = [];
  page.on("console", (m) => m.type() === "error" && !m.location().url.includes("/serve/") && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("response", (r) => r.status() >= 400 && failed.push(`${r.status()} ${new URL(r.url()).pathname}`));
  await page.goto(`${base}/packages/js/test/runtime/browser.html`);
  await page.waitForFunction(() => window.ctxgateResult !== undefined, null, { timeout: 120000 });
  const r = await page.evaluate(() => window.ctxgateResult);
  console.log(`chromium (${browser.version()}): ${r.passed} passed, ${r.failed} failed`);
  assert.deepEqual(r.failures, []);
  const defaults = cases.filter((c) => c.policy === "default").length;
  assert.equal(r.passed, checkCount(cases.length) + clientCheckCount(defaults));
  assert.deepEqual(errors, []);
  const goldenErrors = cases.filter((c) => c.policy === "default" && goldenErrorCode(c.want)).length;
  assert.deepEqual(failed, [...Array(goldenErrors + 1).fill("422 /serve/v1/gate"), "404 /serve/v1/feedback"]);
  assert.match(await page.textContent("body"), /browser: \d+ passed, 0 failed/);
  await page.close();
});
