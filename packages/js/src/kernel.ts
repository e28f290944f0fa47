// kernel.ts: the host side of the Extism kernel ("extism:host/env") that
// the module imports because it is built with go-pdk. The package calls the
// module through its raw exports (ctxgate_input, ctxgate_call: the request
// is written into the module's memory and the result read from it), so of
// the kernel the guest uses only config_get and the block functions around
// it, to read its policy at the first call. This is the same small
// allocator as the Go runner's (host/kernel.go). Input, output and the error
// channel are the Extism ABI's, not offered here: a guest that calls them
// traps rather than reading nothing.

/** A guest that broke the kernel's rules: treated as a trap, never trusted. */
export class KernelError extends Error {}

const BASE = 8; // offset 0 is the null pointer, so blocks start here

export class Kernel {
  #mem = new Uint8Array(1024);
  #len = BASE;
  #blocks = new Map<number, number>(); // offset -> length of each live block
  readonly #config: Map<string, Uint8Array>;
  readonly #max: number;

  constructor(config: Record<string, string>, maxBytes = 64 << 20) {
    const enc = new TextEncoder();
    this.#config = new Map(Object.entries(config).map(([k, v]) => [k, enc.encode(v)]));
    this.#max = maxBytes;
  }

  /** reset frees every block, as the Extism SDKs do before each call. */
  reset(): void {
    this.#blocks.clear();
    this.#len = BASE;
  }

  #alloc(n: number): number {
    if (n <= 0 || this.#len + n > this.#max) return 0;
    const off = this.#len;
    if (off + n > this.#mem.length) {
      const grown = new Uint8Array(Math.max(off + n, this.#mem.length * 2));
      grown.set(this.#mem.subarray(0, this.#len));
      this.#mem = grown;
    }
    this.#mem.fill(0, off, off + n);
    this.#len = off + n;
    this.#blocks.set(off, n);
    return off;
  }

  #span(off: number, n: number): Uint8Array {
    if (off < BASE || n > this.#len || off > this.#len - n) {
      throw new KernelError("extism kernel: access outside allocated memory");
    }
    return this.#mem.subarray(off, off + n);
  }

  #configGet(keyOff: number): number {
    const n = this.#blocks.get(keyOff);
    if (n === undefined) throw new KernelError("extism kernel: config_get of an unallocated key");
    const v = this.#config.get(new TextDecoder().decode(this.#span(keyOff, n)));
    if (v === undefined) return 0;
    const off = this.#alloc(v.length);
    if (off !== 0) this.#mem.set(v, off);
    return off;
  }

  /** The import object for "extism:host/env" (i64 arguments arrive as bigint). */
  imports(): Record<string, (...args: never[]) => unknown> {
    const num = (b: bigint) => {
      if (b > BigInt(Number.MAX_SAFE_INTEGER)) throw new KernelError("extism kernel: offset out of range");
      return Number(b);
    };
    const unused = (name: string) => () => {
      throw new KernelError(`extism kernel: ${name} is not available on the raw path`);
    };
    return {
      alloc: (n: bigint) => BigInt(this.#alloc(num(n))),
      free: (off: bigint) => {
        this.#blocks.delete(num(off));
      },
      length: (off: bigint) => BigInt(this.#blocks.get(num(off)) ?? 0),
      load_u8: (off: bigint) => this.#span(num(off), 1)[0],
      load_u64: (off: bigint) => {
        const s = this.#span(num(off), 8);
        return new DataView(s.buffer, s.byteOffset, 8).getBigUint64(0, true);
      },
      store_u8: (off: bigint, v: number) => {
        this.#span(num(off), 1)[0] = v & 0xff;
      },
      store_u64: (off: bigint, v: bigint) => {
        const s = this.#span(num(off), 8);
        new DataView(s.buffer, s.byteOffset, 8).setBigUint64(0, BigInt.asUintN(64, v), true);
      },
      config_get: (off: bigint) => BigInt(this.#configGet(num(off))),
      input_length: () => 0n,
      input_load_u8: unused("input_load_u8"),
      input_load_u64: unused("input_load_u64"),
      output_set: unused("output_set"),
      error_set: unused("error_set"),
    };
  }
}
