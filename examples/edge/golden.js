// golden.js: the golden check every JavaScript host runs. Each request in
// testdata/requests/<policy>/ is decided by policies/<policy>.json and must
// give exactly the bytes of testdata/decisions/<policy>/<case>.json, which
// are also the Go runner's bytes (host/parity_test.go). The runtime passes
// its own file access in, so Node, Deno and the workerd test driver share
// this file.
//
//   io = { readBytes(path) -> Uint8Array, readText(path) -> string,
//          listDir(path) -> string[] (names) }

// goldenCases lists every (policy, case) pair with its request and expected
// decision bytes, in a fixed order.
export async function goldenCases(io, root) {
  const reqRoot = root + "/testdata/requests";
  const policies = (await io.listDir(reqRoot)).sort();
  const cases = [];
  for (const policy of policies) {
    const names = (await io.listDir(reqRoot + "/" + policy)).filter((n) => n.endsWith(".json")).sort();
    for (const file of names) {
      cases.push({
        policy,
        name: file.slice(0, -5),
        request: await io.readBytes(`${reqRoot}/${policy}/${file}`),
        want: trimNewline(await io.readBytes(`${root}/testdata/decisions/${policy}/${file}`)),
      });
    }
  }
  return cases;
}

// STATUS is the HTTP status of each error code (docs/architecture.md).
export const STATUS = { bad_json: 400, bad_field: 422, limit: 413, bad_policy: 422, bad_answer: 422, internal: 500 };

// goldenErrorCode is the code of a golden file that is the error JSON (a
// request the gate must refuse), else "".
export function goldenErrorCode(want) {
  const t = text(want);
  if (!t.startsWith('{"error":')) return "";
  return JSON.parse(t).error.code;
}

// checkGolden decides every case with decide(policy, requestBytes) ->
// {ok, body, status?} and compares bytes: the decision, or for a golden
// error the error JSON (and its status, when the host gives one). Then the
// cases restated in another score convention (<base>.<metric>, see
// internal/invariance) must decide as their base: the same action and a
// confidence within 1e-5; a difference is a failure, agreement adds no
// count. It returns {passed, failed, failures}.
export async function checkGolden(cases, decide) {
  let passed = 0;
  const failures = [];
  const decided = new Map();
  for (const c of cases) {
    const code = goldenErrorCode(c.want);
    let got;
    try {
      const r = await decide(c.policy, c.request);
      got = r.body;
      if (!r.ok && !code) {
        failures.push(`${c.policy}/${c.name}: error ${r.status}: ${text(r.body)}`);
        continue;
      }
      if (r.ok && code) {
        failures.push(`${c.policy}/${c.name}: decided, but the golden file is the error ${code}`);
        continue;
      }
      if (!r.ok && r.status !== undefined && r.status !== STATUS[code]) {
        failures.push(`${c.policy}/${c.name}: status ${r.status} for ${code}, want ${STATUS[code]}`);
        continue;
      }
    } catch (err) {
      failures.push(`${c.policy}/${c.name}: ${err && err.stack || err}`);
      continue;
    }
    if (equalBytes(got, c.want)) {
      passed++;
      decided.set(`${c.policy}/${c.name}`, got);
    } else {
      failures.push(`${c.policy}/${c.name}: ${code ? "error" : "decision"} differs from the golden file\n` +
        `  got  ${text(got).slice(0, 400)}\n  want ${text(c.want).slice(0, 400)}\n` +
        `  first difference at byte ${firstDiff(got, c.want)}`);
    }
  }
  for (const [key, got] of decided) {
    const dot = key.indexOf(".");
    if (dot < 0) continue;
    const base = decided.get(key.slice(0, dot));
    if (!base) {
      failures.push(`${key}: restated from ${key.slice(0, dot)}, which did not decide as its golden file`);
      continue;
    }
    const a = JSON.parse(text(base)), b = JSON.parse(text(got));
    if (a.action !== b.action || Math.abs(a.confidence - b.confidence) > 1e-5) {
      failures.push(`${key}: decides ${b.action} ${b.confidence}, but ${key.slice(0, dot)} ${a.action} ${a.confidence}: the score conventions must not change a decision`);
    }
  }
  return { passed, failed: failures.length, failures };
}

// BAD_INPUTS are malformed requests every host must answer with the error
// JSON and the status of docs/architecture.md, never a trap or a decision.
// field is the expected "field" ("" when none applies).
export const BAD_INPUTS = [
  { name: "not JSON", body: "{", status: 400, code: "bad_json", field: "" },
  { name: "empty body", body: "", status: 400, code: "bad_json", field: "" },
  { name: "array at the top", body: "[]", status: 400, code: "bad_json", field: "" },
  { name: "missing query", body: '{"chunks":[]}', status: 422, code: "bad_field", field: "query" },
  { name: "query not a string", body: '{"query":1}', status: 422, code: "bad_field", field: "query" },
  {
    name: "vector out of range",
    body: '{"query":"q","chunks":[{"text":"a","scores":{"vector":0.5}},{"text":"b","scores":{"vector":2}}]}',
    status: 422, code: "bad_field", field: "chunks[1].scores.vector",
  },
  {
    name: "negative bm25",
    body: '{"query":"q","chunks":[{"text":"a","scores":{"bm25":-1}}]}',
    status: 422, code: "bad_field", field: "chunks[0].scores.bm25",
  },
  {
    name: "too many chunks",
    body: JSON.stringify({ query: "q", chunks: Array.from({ length: 5000 }, (_, i) => ({ text: "t" + i })) }),
    status: 413, code: "limit", field: "chunks",
  },
];

// checkError checks one error reply: status, and a body that is exactly the
// error JSON shape with the expected code (and field, when given).
export function checkError(bad, status, body) {
  const problems = [];
  if (status !== bad.status) problems.push(`status ${status}, want ${bad.status}`);
  let v;
  try {
    v = JSON.parse(text(body));
  } catch {
    return [...problems, `body is not JSON: ${text(body).slice(0, 200)}`];
  }
  const e = v && v.error;
  const keys = e && Object.keys(e).join(",");
  if (!e || Object.keys(v).length !== 1 || keys !== "code,message,field") {
    problems.push(`not the error JSON shape: ${text(body).slice(0, 200)}`);
  } else {
    if (e.code !== bad.code) problems.push(`code ${e.code}, want ${bad.code}`);
    if (typeof e.message !== "string" || e.message === "") problems.push("empty message");
    if (bad.field !== null && e.field !== bad.field) problems.push(`field ${JSON.stringify(e.field)}, want ${JSON.stringify(bad.field)}`);
  }
  return problems;
}

export function summary(runtime, passed, failed) {
  return `${runtime}: ${passed} passed, ${failed} failed`;
}

function trimNewline(b) {
  return b.length > 0 && b[b.length - 1] === 0x0a ? b.subarray(0, b.length - 1) : b;
}

export function equalBytes(a, b) {
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function firstDiff(a, b) {
  if (!a) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

export function text(b) {
  return b ? new TextDecoder().decode(b) : "(none)";
}
