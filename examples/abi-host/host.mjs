// host.mjs: a ctxgate host written from docs/abi.md alone, in plain
// JavaScript: the WebAssembly API, no Extism SDK and (by default) no WASI
// library. The request is written straight into the module's memory and the
// decision read straight out of it.
//
//   const gate = RawGate.create(new WebAssembly.Module(bytes), { policy: policyJSON });
//   const r = gate.evaluate(requestBytes);  // {ok: true, body} | {ok: false, code, body}
//
// body is the module's bytes unchanged: the decision JSON, or the error JSON
// when ok is false. A trap (the module ran out of memory) is thrown; the
// instance is dropped and the next call makes a new one (docs/abi.md,
// "Errors"). Imports nothing, so it loads in Node, Deno and workerd alike.

// The raw ABI this host speaks (docs/abi.md, "Versioning").
export const ABI_VERSION = 1;

// Ops of ctxgate_call (docs/abi.md, "Ops").
const EVALUATE = 0;
const VALIDATE = 1;
const DESCRIBE = 2;

const ENOSYS = 52;

export class RawGate {
  #module;
  #config;
  #wasi;
  #x = null; // the live instance: {exports, kernel, inPtr, inCap}

  // create makes the first instance and loads the policy in it (describe),
  // so a module of another ABI version throws here and a bad policy comes
  // back from every call as bad_policy. config holds the keys of
  // docs/abi.md, "The policy": policy (JSON text; absent or "" for the
  // built-in default) and trust_keys. wasi, when given, is a WASI preview 1
  // implementation with node:wasi's shape (getImportObject(),
  // initialize(instance)), for the standard-Go build; without it the
  // minimal answers of docs/abi.md are used.
  static create(module, config = {}, { wasi } = {}) {
    const g = new RawGate(module, config, wasi);
    g.#instance();
    return g;
  }

  constructor(module, config, wasi) {
    this.#module = module;
    this.#config = new Map(Object.entries(config).filter(([, v]) => typeof v === "string" && v !== ""));
    this.#wasi = wasi;
  }

  evaluate(request) {
    return this.#call(EVALUATE, bytes(request));
  }

  validate(answer) {
    return this.#call(VALIDATE, bytes(answer));
  }

  describe() {
    return this.#call(DESCRIBE, new Uint8Array(0));
  }

  // #instance returns the live instance, making one when there is none:
  // instantiate, _initialize, check the version, describe (loads the policy).
  #instance() {
    if (this.#x) return this.#x;
    const kernel = new Kernel(this.#config);
    let memory = null;
    const imports = {
      "extism:host/env": kernel.imports(),
      wasi_snapshot_preview1: this.#wasi
        ? this.#wasi.getImportObject().wasi_snapshot_preview1
        : minimalWASI(() => memory),
    };
    for (const imp of WebAssembly.Module.imports(this.#module)) {
      if (imp.kind === "function" && !(imports[imp.module] && imp.name in imports[imp.module])) {
        throw new Error(`ctxgate: the module imports ${imp.module}.${imp.name}, which this host does not provide` +
          (imp.module === "wasi_snapshot_preview1" ? " (pass a complete WASI: the standard-Go build needs one)" : ""));
      }
    }
    const instance = new WebAssembly.Instance(this.#module, imports);
    const exports = instance.exports;
    memory = exports.memory;
    for (const name of ["memory", "_initialize", "ctxgate_abi_version", "ctxgate_input", "ctxgate_call"]) {
      if (!(name in exports)) throw new Error(`ctxgate: the module has no ${name} export (docs/abi.md)`);
    }
    if (this.#wasi) this.#wasi.initialize(instance);
    else exports._initialize();
    const version = exports.ctxgate_abi_version();
    if (version !== ABI_VERSION) {
      throw new Error(`ctxgate: the module speaks raw ABI version ${version}; this host speaks ${ABI_VERSION}`);
    }
    this.#x = { exports, kernel, inPtr: 0, inCap: -1 };
    this.#call(DESCRIBE, new Uint8Array(0));
    return this.#x;
  }

  #call(op, input) {
    const x = this.#instance();
    const { exports } = x;
    try {
      // The buffer keeps its address for any input that fits: ask for a
      // new one only when this input is larger than any before.
      if (input.length > x.inCap) {
        x.inPtr = exports.ctxgate_input(input.length) >>> 0;
        x.inCap = input.length;
        if (x.inPtr === 0) throw new Error(`ctxgate: ctxgate_input gave no buffer for ${input.length} bytes`);
      }
      // Every call: the module decodes the input in place. The memory's
      // buffer is read after each call, since a call may grow it.
      new Uint8Array(exports.memory.buffer, x.inPtr, input.length).set(input);
      const r = BigInt.asUintN(64, exports.ctxgate_call(op, input.length));
      const ptr = Number(r >> 32n);
      const n = Number(r & 0x7fffffffn);
      const isError = (r & 0x80000000n) !== 0n;
      // Copied out: the result lives until the next call.
      const body = new Uint8Array(exports.memory.buffer, ptr, n).slice();
      return isError ? { ok: false, code: codeOf(body), body } : { ok: true, body };
    } catch (err) {
      this.#x = null; // a trap: this instance is not used again
      throw err;
    } finally {
      x.kernel.reset();
    }
  }
}

// Kernel is the part of extism:host/env the module calls on the raw path: a
// byte store of its own (not the module's memory) from which the module
// reads its config. Offsets are i64, so they cross as BigInt.
class Kernel {
  #config;
  #store = new Uint8Array(256);
  #view = new DataView(this.#store.buffer);
  #used = 8; // offset 0 is "no block"
  #blocks = new Map(); // offset -> length

  constructor(config) {
    this.#config = config;
  }

  reset() {
    this.#used = 8;
    this.#blocks.clear();
  }

  #alloc(n) {
    if (n <= 0) return 0;
    const off = this.#used;
    if (off + n > this.#store.length) {
      const grown = new Uint8Array(Math.max(2 * this.#store.length, off + n));
      grown.set(this.#store);
      this.#store = grown;
      this.#view = new DataView(grown.buffer);
    }
    this.#used += n;
    this.#blocks.set(off, n);
    return off;
  }

  // at checks that [off, off+n) lies inside the store's blocks' span, and
  // throws (a trap) otherwise: never a silent zero.
  #at(off, n) {
    const o = Number(off);
    if (o < 8 || o + n > this.#used) throw new Error(`extism kernel: access at ${off} outside the allocated blocks`);
    return o;
  }

  imports() {
    const enc = new TextEncoder();
    const dec = new TextDecoder();
    const unused = (name) => () => {
      throw new Error(`extism kernel: ${name} is for the Extism exports, not the raw ABI`);
    };
    return {
      alloc: (n) => BigInt(this.#alloc(Number(n))),
      free: (off) => void this.#blocks.delete(Number(off)),
      length: (off) => BigInt(this.#blocks.get(Number(off)) ?? 0),
      store_u8: (off, v) => void (this.#store[this.#at(off, 1)] = v),
      store_u64: (off, v) => this.#view.setBigUint64(this.#at(off, 8), BigInt.asUintN(64, v), true),
      load_u8: (off) => this.#store[this.#at(off, 1)],
      load_u64: (off) => this.#view.getBigUint64(this.#at(off, 8), true),
      config_get: (keyOff) => {
        const k = Number(keyOff);
        const n = this.#blocks.get(k);
        if (n === undefined) throw new Error("extism kernel: config_get of an unallocated key");
        const value = this.#config.get(dec.decode(this.#store.subarray(k, k + n)));
        if (value === undefined) return 0n;
        const b = enc.encode(value);
        const off = this.#alloc(b.length);
        this.#store.set(b, off);
        return BigInt(off);
      },
      input_length: unused("input_length"),
      input_load_u8: unused("input_load_u8"),
      input_load_u64: unused("input_load_u64"),
      output_set: unused("output_set"),
      error_set: unused("error_set"),
    };
  }
}

// minimalWASI answers the WASI preview 1 calls of the TinyGo build as
// docs/abi.md's table says: no arguments, no environment, any clock and
// random bytes (the gate reads neither), no files.
function minimalWASI(memory) {
  const view = () => new DataView(memory().buffer);
  const zeroPair = (a, b) => {
    view().setUint32(a, 0, true);
    view().setUint32(b, 0, true);
    return 0;
  };
  return {
    random_get: (buf, len) => {
      new Uint8Array(memory().buffer, buf, len).fill(0x5a);
      return 0;
    },
    clock_time_get: (_id, _precision, out) => {
      view().setBigUint64(out, 0n, true);
      return 0;
    },
    args_sizes_get: zeroPair,
    args_get: () => 0,
    environ_sizes_get: zeroPair,
    environ_get: () => 0,
    fd_write: () => ENOSYS,
    fd_close: () => ENOSYS,
    fd_seek: () => ENOSYS,
    proc_exit: (code) => {
      throw new Error(`ctxgate: the module exited (code ${code})`);
    },
  };
}

function bytes(input) {
  if (typeof input === "string") return new TextEncoder().encode(input);
  if (input instanceof Uint8Array) return input;
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  throw new TypeError("ctxgate: input must be a string, ArrayBuffer or Uint8Array");
}

// codeOf reads the code out of the error JSON.
function codeOf(errorJSON) {
  try {
    return JSON.parse(new TextDecoder().decode(errorJSON)).error.code;
  } catch {
    return "internal";
  }
}
