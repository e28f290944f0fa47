// readme.test.mjs: the README's in-process example ("The gate, in-process"),
// run as written, with "@ctxgate/ctxgate" resolved to dist/. A statement
// whose comment is a value (`decision.action; // "caveat"`, or
// `gate.validate(...); // unknown: ["S9"]` for one member of the result)
// must evaluate to that value; a string ending in "..." shows its start.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { pkg, readmeBlock } from "./helpers.mjs";

/** matchesShown: actual is the value the README shows, "..." at a string's end standing for the rest. */
function matchesShown(actual, shown) {
  if (typeof shown === "string" && shown.endsWith("...")) return typeof actual === "string" && actual.startsWith(shown.slice(0, -3));
  assert.deepEqual(actual, shown);
  return true;
}

/** showing: the value a `// ...` comment shows, or undefined when it shows none. */
function showing(comment) {
  const key = /^([A-Za-z_]\w*): (.*)$/.exec(comment);
  const literal = key ? key[2] : comment;
  try {
    return { key: key?.[1], value: JSON.parse(literal) };
  } catch {
    return undefined; // prose, not a value
  }
}

test("README: the in-process example runs and prints what its comments show", async (t) => {
  const block = readmeBlock("## The gate, in-process", "js");
  const index = pathToFileURL(join(pkg, "dist/index.js")).href;
  let checks = 0;
  const lines = block.split("\n").map((line, i) => {
    line = line.replaceAll('"@ctxgate/ctxgate"', JSON.stringify(index));
    const m = /^(\s*)([^/].*?);\s*\/\/\s*(.+)$/.exec(line);
    const shown = m && !/^(const|let|var|import|export)\b/.test(m[2]) ? showing(m[3]) : undefined;
    if (!shown) return line;
    checks++;
    return `${m[1]}__shown(${m[2]}, ${JSON.stringify(shown)}, ${i + 1});`;
  });
  assert.ok(checks >= 4, `only ${checks} shown values in the example`);
  const dir = mkdtempSync(join(tmpdir(), "ctxgate-js-readme-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "example.mjs");
  writeFileSync(file, lines.join("\n"));
  const seen = [];
  globalThis.__shown = (actual, { key, value }, line) => {
    const got = key === undefined ? actual : actual[key];
    try {
      matchesShown(got, value);
    } catch (err) {
      throw new Error(`README example line ${line}: shows ${JSON.stringify(value)}, the code gives ${JSON.stringify(got)}`);
    }
    seen.push(line);
  };
  await import(pathToFileURL(file).href);
  delete globalThis.__shown;
  assert.equal(seen.length, checks, "not every shown value was reached");
});
