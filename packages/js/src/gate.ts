// gate.ts: the gate module in-process. One instance per Gate, called
// through the module's raw exports: the request is written into the
// module's memory (ctxgate_input), decided (ctxgate_call), and the result
// read back, so evaluate is synchronous and returns the module's bytes
// unchanged: the same bytes as every other host (testdata/decisions).

import { Kernel } from "./kernel.js";
import { wasiImports } from "./wasi.js";
import { loadModule, type ModuleSource } from "./load.js";
import { policyJSON, type PolicyInput } from "./policy.js";
import { errorFromJSON, LimitError, ModuleTrapError, parseErrorJSON } from "./errors.js";
import { decisionOf } from "./decision.js";
import type { Decider, Decision, Description, GateRequest, GateResult, RerankScale, Validation, ValidateInput, VectorMetric } from "./types.js";

/** What ctxgate serve and the Go host accept at most (host.DefaultMaxInputBytes). */
export const DEFAULT_MAX_INPUT_BYTES = 8 << 20;

const OP_EVALUATE = 0;
const OP_VALIDATE = 1;
const OP_DESCRIBE = 2;

export interface GateOptions {
  /** The module (default: the ctxgate.wasm shipped with this package). Required in workerd. */
  module?: ModuleSource;
  /** A preset name (`default`, `wikigr`, ...), the policy's JSON, or a policy object. Default: the built-in default. */
  policy?: PolicyInput;
  /** Trusted public keys (JSON): the policy must then be a bundle they sign. */
  trustKeys?: string | Record<string, unknown> | unknown[];
  /** Inputs larger than this are refused before they reach the module (limit). Default 8 MiB. */
  maxInputBytes?: number;
  /** The vector_metric of every request that states none (the module's config key): the vector store's metric. */
  vectorMetric?: VectorMetric;
  /** The rerank_scale of every request that states none. */
  rerankScale?: RerankScale;
}

/** The request (or answer) as bytes, text, or an object to serialise. */
export type Input = string | ArrayBuffer | ArrayBufferView;

interface RawExports {
  memory: WebAssembly.Memory;
  _initialize?: () => void;
  ctxgate_input(n: number): number;
  ctxgate_call(op: number, n: number): bigint;
}

interface Instance {
  exports: RawExports;
  kernel: Kernel;
  output: { text: string };
  inPtr: number;
  inCap: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The gate, in-process. Create one with Gate.create and reuse it: a call
 * costs tens to hundreds of microseconds, a new Gate about a millisecond.
 * Calls are synchronous; a bad request throws a CtxgateError subclass with
 * the gate's code and field.
 */
export class Gate implements Decider {
  readonly #module: WebAssembly.Module;
  readonly #config: Record<string, string>;
  readonly #maxInput: number;
  #instance: Instance | undefined;
  #closed = false;

  private constructor(module: WebAssembly.Module, config: Record<string, string>, maxInput: number) {
    this.#module = module;
    this.#config = config;
    this.#maxInput = maxInput;
  }

  /**
   * create compiles (or reuses) the module, instantiates it with the policy
   * and checks that the policy loads: an invalid policy, or a bundle the
   * trust keys do not verify, is a PolicyError here rather than on the
   * first request.
   */
  static async create(options: GateOptions = {}): Promise<Gate> {
    const config: Record<string, string> = {};
    // An empty value would read as "use the built-in default" anyway; an
    // absent key says it plainly.
    const policy = policyJSON(options.policy);
    if (policy) config.policy = policy;
    if (options.vectorMetric) config.vector_metric = options.vectorMetric;
    if (options.rerankScale) config.rerank_scale = options.rerankScale;
    if (options.trustKeys !== undefined) {
      config.trust_keys = typeof options.trustKeys === "string" ? options.trustKeys : JSON.stringify(options.trustKeys);
    }
    const module = await loadModule(options.module);
    const gate = new Gate(module, config, options.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES);
    gate.#instance = await gate.#instantiate();
    gate.describe(); // throws the policy's error, if any
    return gate;
  }

  /** Decides one request and returns the decision. */
  evaluate(request: GateRequest | Input): Decision {
    return decisionOf(this.evaluateBytes(request));
  }

  /** Decides one request and returns the decision JSON exactly as the module wrote it. */
  evaluateBytes(request: GateRequest | Input): Uint8Array {
    return this.#call(OP_EVALUATE, request);
  }

  /** Checks a model's answer against the tags its prompt offered. */
  validate(input: ValidateInput | Input): Validation {
    return JSON.parse(decoder.decode(this.validateBytes(input))) as Validation;
  }

  /** validate, returning the validation JSON as the module wrote it. */
  validateBytes(input: ValidateInput | Input): Uint8Array {
    return this.#call(OP_VALIDATE, input);
  }

  /** The module's version, schema version and the loaded policy. */
  describe(): Description {
    return JSON.parse(decoder.decode(this.#call(OP_DESCRIBE, new Uint8Array(0)))) as Description;
  }

  /** The Decider interface (the LangChain and LlamaIndex components take one). */
  async decide(request: GateRequest): Promise<GateResult> {
    return { decision: this.evaluate(request) };
  }

  /** Drops the instance; later calls throw. */
  close(): void {
    this.#closed = true;
    this.#instance = undefined;
  }

  #call(op: number, input: object | Input): Uint8Array {
    if (this.#closed) throw new Error("ctxgate: the gate is closed");
    const bytes = bytesOf(input);
    if (bytes.length > this.#maxInput) {
      throw new LimitError({
        code: "limit",
        message: `input is ${bytes.length} bytes; this host accepts at most ${this.#maxInput}`,
      });
    }
    // A trapped instance was dropped: a new one (synchronous: the module
    // is already compiled, and small enough for every browser's limit).
    const x = this.#instance ?? (this.#instance = this.#instantiateSync());
    let packed: bigint;
    try {
      x.kernel.reset();
      x.output.text = "";
      // The guest keeps its input buffer's address while inputs fit, so a
      // call that fits skips the export (as the Go runner does).
      if (x.inPtr === 0 || bytes.length > x.inCap) {
        x.inPtr = x.exports.ctxgate_input(bytes.length) >>> 0;
        x.inCap = bytes.length;
        if (x.inPtr === 0) throw new Error(`ctxgate_input gave no room for ${bytes.length} bytes`);
      }
      new Uint8Array(x.exports.memory.buffer, x.inPtr, bytes.length).set(bytes);
      packed = x.exports.ctxgate_call(op, bytes.length);
    } catch (err) {
      throw this.#trap(x, err);
    }
    const ptr = Number(packed >> 32n);
    const n = Number(packed & 0x7fffffffn);
    const isErr = (packed & 0x80000000n) !== 0n;
    const mem = x.exports.memory.buffer;
    if (ptr + n > mem.byteLength) throw this.#trap(x, new Error("result outside guest memory"));
    // A copy: the guest overwrites this memory on the next call.
    const out = new Uint8Array(mem, ptr, n).slice();
    if (!isErr) return out;
    const text = decoder.decode(out);
    // The guest promises the error JSON; anything else is a broken module.
    if (!parseErrorJSON(text)) throw this.#trap(x, new Error(`the guest's error is not the error JSON: ${text.slice(0, 200)}`));
    throw errorFromJSON(text);
  }

  // #trap drops the instance (its state is unknown after a trap) and
  // describes what happened, with what the guest printed.
  #trap(x: Instance, cause: unknown): ModuleTrapError {
    if (this.#instance === x) this.#instance = undefined;
    const out = x.output.text ? `\nguest output: ${x.output.text}` : "";
    return new ModuleTrapError({ code: "internal", message: `the module trapped: ${String((cause as Error)?.message ?? cause)}${out}`, cause });
  }

  #imports(): { imports: WebAssembly.Imports; bind(exports: RawExports): Instance } {
    const kernel = new Kernel(this.#config);
    const output = { text: "" };
    let memory: WebAssembly.Memory | undefined;
    const imports = {
      wasi_snapshot_preview1: wasiImports(() => memory!, output),
      "extism:host/env": kernel.imports(),
    } as unknown as WebAssembly.Imports;
    return {
      imports,
      bind(exports: RawExports): Instance {
        if (typeof exports.ctxgate_input !== "function" || typeof exports.ctxgate_call !== "function") {
          throw new Error("ctxgate: the module has no raw exports (ctxgate_input, ctxgate_call): use a ctxgate.wasm built from guest/extism");
        }
        if (!(exports.memory instanceof WebAssembly.Memory)) throw new Error("ctxgate: the module exports no memory");
        memory = exports.memory;
        // Reactor: _initialize sets up the runtime before any export runs.
        exports._initialize?.();
        return { exports, kernel, output, inPtr: 0, inCap: 0 };
      },
    };
  }

  async #instantiate(): Promise<Instance> {
    const { imports, bind } = this.#imports();
    const inst = await WebAssembly.instantiate(this.#module, imports);
    return bind(inst.exports as unknown as RawExports);
  }

  #instantiateSync(): Instance {
    const { imports, bind } = this.#imports();
    return bind(new WebAssembly.Instance(this.#module, imports).exports as unknown as RawExports);
  }
}

// bytesOf: strings and objects as UTF-8 JSON, bytes as they are.
function bytesOf(input: object | Input): Uint8Array {
  if (typeof input === "string") return encoder.encode(input);
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  return encoder.encode(JSON.stringify(input));
}
