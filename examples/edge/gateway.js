// gateway.js: an OpenAI chat-completion body mapped to a gate request and
// rewritten after the decision. It follows host/server/chatbody.go and
// guest/envoy/filter/chat.go rule for rule: the same "documents" and
// "ctxgate" members, the same query (the last user message's text), the
// same system message before that message, the same refusal bodies.
//
// One difference, on purpose: this file re-serialises with JSON.stringify,
// so the upstream body is the Go gateway's JSON value, not its bytes (number
// spelling like 1.0 vs 1, and escapes, may differ). The decision itself is
// made on the same value, and a JSON number re-spelt by JSON.stringify
// parses back to the same double, so the gate decides exactly as the Go
// gateway does. docs/edge.md records this.

export const EXTENSION_FIELD = "ctxgate";

export class BodyError extends Error {
  constructor(code, field, message) {
    super(message);
    this.code = code;
    this.field = field || "";
  }
}

export const NOT_GATED = Symbol("not_gated");

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

// parseChat reads the body text. It returns NOT_GATED for a body with
// neither documents nor the extension (passed through untouched), a chat
// object, or throws BodyError.
export function parseChat(text, docsPath, queryPath) {
  let root;
  try {
    root = JSON.parse(text);
  } catch (err) {
    throw new BodyError("bad_json", "", "request body is not valid JSON: " + err.message);
  }
  if (!isObject(root)) throw new BodyError("bad_json", "", "request body must be a JSON object");
  const c = { root, docsPath, docs: undefined, ext: undefined, lastUser: -1, lastUserText: undefined,
    query: undefined, queryField: "", stream: false, model: undefined };

  const docs = getPath(root, docsPath);
  if (docs !== undefined) {
    if (!Array.isArray(docs)) throw new BodyError("bad_field", docsPath.join("."), "must be an array of chunks");
    c.docs = docs;
  }
  if (Object.hasOwn(root, EXTENSION_FIELD)) {
    if (!isObject(root[EXTENSION_FIELD])) {
      throw new BodyError("bad_field", EXTENSION_FIELD, "must be an object in the gate's request shape");
    }
    c.ext = root[EXTENSION_FIELD];
  }
  if (c.docs === undefined && c.ext === undefined) return NOT_GATED;
  if (c.docs !== undefined && c.ext !== undefined && Object.hasOwn(c.ext, "chunks")) {
    throw new BodyError("bad_field", docsPath.join("."), "documents and ctxgate.chunks are both set; send one");
  }
  if (root.stream === true) c.stream = true;
  if (typeof root.model === "string") c.model = root.model;
  if (Object.hasOwn(root, "messages")) {
    if (!Array.isArray(root.messages)) throw new BodyError("bad_field", "messages", "must be an array");
    findLastUser(c);
  }
  if (queryPath.length > 0) {
    const q = getPath(root, queryPath);
    if (typeof q !== "string") throw new BodyError("bad_field", queryPath.join("."), "missing, or not a string");
    c.query = q;
    c.queryField = queryPath.join(".");
  } else if (c.lastUserText !== undefined) {
    c.query = c.lastUserText;
    c.queryField = `messages[${c.lastUser}].content`;
  } else if (!(c.ext && Object.hasOwn(c.ext, "query"))) {
    throw new BodyError("bad_field", "messages", "no user message with text content to use as the query");
  }
  return c;
}

function getPath(v, path) {
  for (const k of path) {
    if (!isObject(v) || !Object.hasOwn(v, k)) return undefined;
    v = v[k];
  }
  return v;
}

function findLastUser(c) {
  c.root.messages.forEach((m, i) => {
    if (!isObject(m) || m.role !== "user") return;
    c.lastUser = i;
    c.lastUserText = undefined;
    if (typeof m.content === "string") {
      c.lastUserText = m.content;
    } else if (Array.isArray(m.content)) {
      // Multimodal content: the first text part is the question.
      const part = m.content.find((p) => isObject(p) && p.type === "text" && typeof p.text === "string");
      if (part) c.lastUserText = part.text;
    }
  });
}

// gateRequest: the extension's members, then "query" and "chunks" when the
// extension does not set them (the Go gateway's order).
export function gateRequest(c) {
  const req = {};
  if (c.ext) Object.assign(req, c.ext);
  if (!Object.hasOwn(req, "query") && c.query !== undefined) req.query = c.query;
  if (c.docs !== undefined) req.chunks = c.docs;
  return JSON.stringify(req);
}

// userField renames a core error's field from the gate request's names to
// the body's: "chunks[2].scores.vector" reads "documents[2].scores.vector".
export function userField(c, field) {
  if (!field) return field;
  const i = field.search(/[.[]/);
  const root = i >= 0 ? field.slice(0, i) : field;
  const rest = i >= 0 ? field.slice(i) : "";
  if (root === "chunks" && c.docs !== undefined) return c.docsPath.join(".") + rest;
  if (root === "query" && c.queryField && !(c.ext && Object.hasOwn(c.ext, "query"))) return c.queryField + rest;
  if (c.ext) return EXTENSION_FIELD + "." + field;
  return field;
}

// rewrite returns the upstream body: documents and the extension removed,
// a system message with systemText before the last user message (when set),
// and that message's content replaced by userText when replaceUser is set.
export function rewrite(c, systemText, userText, replaceUser) {
  const out = dropPath(c.root, c.docsPath, 0);
  delete out[EXTENSION_FIELD];
  if (Array.isArray(c.root.messages)) {
    const msgs = [];
    c.root.messages.forEach((m, i) => {
      if (i !== c.lastUser) {
        msgs.push(m);
        return;
      }
      // The gate's instructions sit right before the question they govern,
      // after any system prompt of the application's own.
      if (systemText) msgs.push({ role: "system", content: systemText });
      if (!replaceUser) {
        msgs.push(m);
        return;
      }
      const u = {};
      for (const k of Object.keys(m)) if (k !== "content") u[k] = m[k];
      u.content = userText;
      msgs.push(u);
    });
    out.messages = msgs;
  }
  return JSON.stringify(out);
}

// dropPath copies obj without the member at path (objects on the path are
// copied, everything else shared).
function dropPath(obj, path, depth) {
  const out = {};
  for (const k of Object.keys(obj)) {
    if (depth < path.length && k === path[depth]) {
      if (depth === path.length - 1) continue;
      out[k] = isObject(obj[k]) ? dropPath(obj[k], path, depth + 1) : obj[k];
      continue;
    }
    out[k] = obj[k];
  }
  return out;
}

// systemText: the constraint instructions, the <sources> block and, for
// caveat, the caveat, joined by blank lines.
export function systemText(d) {
  let s = "";
  if (d.prompt) {
    s = d.prompt.instructions || "";
    if (d.prompt.sources) s += (s ? "\n\n" : "") + d.prompt.sources;
  }
  if (d.action === "caveat" && d.caveat) s += (s ? "\n\n" : "") + d.caveat;
  return s;
}

// The completion id of a local refusal is fixed, like "created": 0, so a
// refusal is the same bytes for the same input; the x-ctxgate-* headers say
// it did not come from a model.
const REFUSAL_ID = "ctxgate-refusal";

// refusalCompletion: the Go gateway's chat.completion for a hard refusal,
// with the sufficient-context document's "sufficiency" member. confidenceRaw is the confidence as
// the decision JSON spells it.
export function refusalCompletion(model, message, d, confidenceRaw) {
  return `{"id":"${REFUSAL_ID}","object":"chat.completion","created":0,"model":${JSON.stringify(model ?? "ctxgate")}` +
    `,"choices":[{"index":0,"message":{"role":"assistant","content":${JSON.stringify(message)}},"finish_reason":"stop"}]` +
    `,"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}` +
    `,"sufficiency":{"score":${confidenceRaw},"level":${JSON.stringify(d.level)},"factors":${JSON.stringify(d.confidence_factors || [])}}}`;
}

// refusalStream: the same refusal as server-sent events for "stream": true.
export function refusalStream(model, message) {
  const head = `data: {"id":"${REFUSAL_ID}","object":"chat.completion.chunk","created":0,"model":${JSON.stringify(model ?? "ctxgate")}`;
  return `${head},"choices":[{"index":0,"delta":{"role":"assistant","content":${JSON.stringify(message)}},"finish_reason":null}]}\n\n` +
    `${head},"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`;
}

// confidenceRaw returns the "confidence" number exactly as the decision JSON
// writes it (the x-ctxgate-confidence header and the refusal's score use
// these bytes, not a JavaScript re-formatting).
export function confidenceRaw(decisionText) {
  const m = /"confidence":(-?[0-9][0-9.eE+-]*)/.exec(decisionText);
  return m ? m[1] : "0";
}

// offeredTags: the S# tags the prompt offers (kept chunks), for the answer check.
export function offeredTags(d) {
  return (d.chunks || []).map((c) => c.tag).filter((t) => t);
}
