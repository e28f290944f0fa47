// types.test.mjs: the published declarations as a TypeScript user meets
// them: test/types/consumer.ts (strict, exactOptionalPropertyTypes,
// nodenext) imports the package by its own name, "." and the langchain and
// llamaindex subpaths, with the real framework types; tsc must accept it.
import { test } from "node:test";
import { execFileSync } from "node:child_process";
import { pkg } from "./helpers.mjs";

test("types: a strict TypeScript consumer of every entry point compiles", () => {
  try {
    execFileSync(`${pkg}/node_modules/.bin/tsc`, ["-p", `${pkg}/test/types/tsconfig.json`], { stdio: "pipe", timeout: 120000 });
  } catch (err) {
    throw new Error(`tsc rejected the consumer:\n${err.stdout}${err.stderr}`);
  }
});
