// ctxgate.js: the gate module behind a small JavaScript API, shared by the
// workerd Worker, the Deno and the Node examples. It only moves bytes: the
// decision JSON and the error JSON are the module's own output, returned
// unchanged, so every host gives the bytes the Go runner gives.
//
// The caller passes createPlugin in (from "@extism/extism"): the Worker
// bundles the SDK's browser build, Node and Deno resolve the package
// themselves, and this file imports nothing, so it loads the same everywhere.

const ERROR_PREFIX = "Plugin-originated error: ";

// STATUS maps the error codes of docs/architecture.md to HTTP statuses.
// bad_policy is 422 for a request; a gate that has no policy answers 503
// (see policyUnavailable).
const STATUS = {
  bad_json: 400,
  bad_field: 422,
  limit: 413,
  bad_policy: 422,
  bad_answer: 422,
};

export class Gate {
  #plugin;
  #queue = Promise.resolve();

  constructor(plugin) {
    this.#plugin = plugin;
  }

  // create instantiates the module once with the policy JSON in the
  // "policy" config key. wasm is a WebAssembly.Module (workerd forbids
  // compiling bytes at run time, so the Worker gets a compiled module
  // binding) or the module's bytes. A bad policy is not an exception of
  // create: the guest reports it on every call as bad_policy, like the other
  // hosts, so the caller sees the same error JSON.
  //
  // extraConfig adds other config keys (trust_keys for a signed bundle).
  static async create(createPlugin, wasm, policyJSON, extraConfig = {}) {
    const manifest = wasm instanceof WebAssembly.Module
      ? { wasm: [{ module: wasm }] }
      : { wasm: [{ data: exact(wasm) }] };
    // An empty policy means the module's built-in default, which is an
    // absent key: the SDK cannot hand the guest an empty config value (its
    // config_get throws "failed to store output" on "").
    const config = { ...extraConfig };
    if (policyJSON) config.policy = policyJSON;
    // The browser build's WASI shim turns its debug log on when no debug
    // option is given (and the SDK gives none), binding console.log when the
    // instance is made: the guest's start-up would print "wasi: 0 0" into a
    // CLI's output. Muting console.log for just this await binds a no-op.
    const log = console.log;
    console.log = () => {};
    let plugin;
    try {
      plugin = await createPlugin(manifest, {
        // Both builds are WASI reactors: the SDK calls _initialize only with WASI.
        useWasi: true,
        runInWorker: false,
        config,
      });
    } finally {
      console.log = log;
    }
    return new Gate(plugin);
  }

  // evaluate decides one request (its raw JSON bytes or a string).
  evaluate(request) {
    return this.#call("evaluate", request);
  }

  // validate checks one answer ({"answer", "tags", "query"}).
  validate(answer) {
    return this.#call("validate", answer);
  }

  // describe returns the loaded policy's description.
  describe() {
    return this.#call("describe", new Uint8Array(0));
  }

  close() {
    return this.#plugin.close();
  }

  // #call returns {ok: true, body} with the output bytes, or
  // {ok: false, status, code, body} with the error JSON bytes. Anything that
  // is not the guest's error JSON (a trap, a missing export) is thrown: it
  // is a bug or a broken module, not bad input.
  //
  // Calls are serialised: the SDK keeps one call stack per plugin and a
  // second call that started while the first awaited would share it.
  #call(name, input) {
    const run = () => this.#callNow(name, input);
    const p = this.#queue.then(run, run);
    this.#queue = p.then(noop, noop);
    return p;
  }

  async #callNow(name, input) {
    const plugin = this.#plugin;
    let out;
    try {
      out = await plugin.call(name, exact(input));
    } catch (err) {
      const msg = String(err && err.message);
      if (!msg.startsWith(ERROR_PREFIX)) throw err;
      const body = new TextEncoder().encode(msg.slice(ERROR_PREFIX.length));
      return { ok: false, status: statusOf(codeOf(body)), code: codeOf(body), body };
    } finally {
      // The SDK keeps every block (input, output) until reset; without this
      // a long-lived instance grows by the request and decision per call.
      await plugin.reset();
    }
    // A call with no output (never for evaluate) gives null.
    return { ok: true, body: out ? out.bytes().slice() : new Uint8Array(0) };
  }
}

function noop() {}

// exact returns bytes the SDK can wrap safely: it stores a Uint8Array by its
// whole underlying ArrayBuffer, so a view into a larger buffer (a pooled
// Node Buffer, a subarray) would hand the guest the neighbouring bytes too.
function exact(input) {
  if (typeof input === "string") return new TextEncoder().encode(input);
  if (input instanceof ArrayBuffer) return new Uint8Array(input.slice(0));
  if (ArrayBuffer.isView(input)) {
    const u8 = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    if (u8.byteOffset === 0 && u8.byteLength === u8.buffer.byteLength && u8.buffer.constructor === ArrayBuffer) {
      return u8;
    }
    return u8.slice();
  }
  throw new TypeError("ctxgate: input must be a string, ArrayBuffer or Uint8Array");
}

// codeOf reads the error code out of the error JSON.
export function codeOf(errorJSON) {
  try {
    const v = JSON.parse(new TextDecoder().decode(errorJSON));
    return (v && v.error && v.error.code) || "internal";
  } catch {
    return "internal";
  }
}

export function statusOf(code) {
  return STATUS[code] || 500;
}

// errorJSON writes an error in the shape every host uses, for errors found
// outside the module (an oversized body, a missing policy).
// Same member order as gate.AppendError; "field" is "" when none applies.
export function errorJSON(code, message, field = "") {
  return new TextEncoder().encode(JSON.stringify({ error: { code, message, field } }));
}
