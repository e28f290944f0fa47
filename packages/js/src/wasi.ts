// wasi.ts: the few WASI preview 1 functions the TinyGo module imports, with
// nothing behind them: no files, no arguments, no environment, a clock stuck
// at 0 and a fixed randomness source. The gate reads none of these (it is
// pure); they exist because TinyGo's runtime imports them. Keeping them
// inert is what makes a decision the same bytes in every host: the Go
// runner gives the module wazero's equivalents.

const ESUCCESS = 0;
const EBADF = 8;

/** proc_exit: the guest asked to stop (TinyGo does on a fatal runtime error). */
export class WasiExit extends Error {
  constructor(readonly exitCode: number) {
    super(`the module exited with code ${exitCode}`);
  }
}

/**
 * wasiImports returns the import object for "wasi_snapshot_preview1".
 * memory() gives the instance's memory (known only after instantiation);
 * what the guest writes to stdout/stderr is kept (the last 4 KiB) in
 * output, for the message of a trap.
 */
export function wasiImports(memory: () => WebAssembly.Memory, output: { text: string }): Record<string, (...args: never[]) => unknown> {
  const view = () => new DataView(memory().buffer);
  let seed = 0x2545f491; // xorshift32 state: fixed, so every run is the same
  const decoder = new TextDecoder();
  return {
    fd_write(fd: number, iovs: number, iovsLen: number, nwritten: number): number {
      const v = view();
      let n = 0;
      for (let i = 0; i < iovsLen; i++) {
        const ptr = v.getUint32(iovs + i * 8, true);
        const len = v.getUint32(iovs + i * 8 + 4, true);
        if (fd === 1 || fd === 2) {
          output.text = (output.text + decoder.decode(new Uint8Array(memory().buffer, ptr, len))).slice(-4096);
        }
        n += len;
      }
      v.setUint32(nwritten, n, true);
      return fd === 1 || fd === 2 ? ESUCCESS : EBADF;
    },
    clock_time_get(_id: number, _precision: bigint, time: number): number {
      view().setBigUint64(time, 0n, true);
      return ESUCCESS;
    },
    args_sizes_get(argc: number, size: number): number {
      const v = view();
      v.setUint32(argc, 0, true);
      v.setUint32(size, 0, true);
      return ESUCCESS;
    },
    args_get(): number {
      return ESUCCESS;
    },
    environ_sizes_get(count: number, size: number): number {
      const v = view();
      v.setUint32(count, 0, true);
      v.setUint32(size, 0, true);
      return ESUCCESS;
    },
    environ_get(): number {
      return ESUCCESS;
    },
    fd_close(): number {
      return EBADF;
    },
    fd_seek(): number {
      return EBADF;
    },
    proc_exit(code: number): never {
      throw new WasiExit(code);
    },
    random_get(buf: number, len: number): number {
      const b = new Uint8Array(memory().buffer, buf, len);
      for (let i = 0; i < len; i++) {
        seed ^= seed << 13;
        seed ^= seed >>> 17;
        seed ^= seed << 5;
        b[i] = seed & 0xff;
      }
      return ESUCCESS;
    },
  };
}
