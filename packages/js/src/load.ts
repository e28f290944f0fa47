// load.ts: finding and compiling the gate module in any runtime. The
// package ships ctxgate.wasm beside dist/; by default it is read from
// there: a file read under Node and Deno, a fetch in browsers. workerd (and
// Cloudflare Workers) may not compile Wasm from bytes at run time: import
// the module there (`import wasm from "@ctxgate/ctxgate/ctxgate.wasm"`,
// which wrangler turns into a compiled WebAssembly.Module) and pass it in.

/** Where the module comes from: compiled, its bytes, a response, or a URL/path to read. */
export type ModuleSource =
  | WebAssembly.Module
  | ArrayBuffer
  | ArrayBufferView
  | Response
  | PromiseLike<Response>
  | URL
  | string;

/** The URL of the ctxgate.wasm this package ships. */
export function defaultModuleURL(): URL {
  return new URL("../ctxgate.wasm", import.meta.url);
}

// The module cache for the default source: compiling once per process
// keeps Gate.create cheap after the first (instances are not shared).
let defaultModule: Promise<WebAssembly.Module> | undefined;

/** loadModule compiles the module from source (default: the one the package ships). */
export function loadModule(source?: ModuleSource): Promise<WebAssembly.Module> {
  if (source === undefined) {
    defaultModule ??= compileFrom(defaultModuleURL()).catch((err) => {
      defaultModule = undefined;
      throw err;
    });
    return defaultModule;
  }
  return compileFrom(source);
}

async function compileFrom(source: ModuleSource): Promise<WebAssembly.Module> {
  if (source instanceof WebAssembly.Module) return source;
  if (source instanceof ArrayBuffer) return WebAssembly.compile(source);
  if (ArrayBuffer.isView(source)) {
    return WebAssembly.compile(new Uint8Array(source.buffer, source.byteOffset, source.byteLength).slice());
  }
  if (typeof source === "string" || source instanceof URL) {
    return compileFrom(await read(source));
  }
  const res = await source;
  if (!res.ok) throw new Error(`ctxgate: fetching the module: HTTP ${res.status} from ${res.url}`);
  return WebAssembly.compile(await res.arrayBuffer());
}

// read returns the bytes at a URL or a path: file URLs and paths through
// the runtime's file API (Node's fetch cannot read files), anything else
// through fetch.
async function read(where: string | URL): Promise<ArrayBuffer | Response> {
  let url: URL | undefined;
  try {
    url = new URL(where);
  } catch {
    url = undefined; // a path
  }
  if (url && url.protocol !== "file:") return fetch(url);
  const deno = (globalThis as { Deno?: { readFile(p: string | URL): Promise<Uint8Array> } }).Deno;
  if (deno) return bytesOf(await deno.readFile(url ?? where));
  const proc = (globalThis as { process?: { versions?: { node?: string } } }).process;
  if (proc?.versions?.node) {
    // A computed specifier: bundlers for the browser leave it alone.
    const spec = "node:fs/promises";
    const fs = (await import(spec)) as { readFile(p: string | URL): Promise<Uint8Array> };
    return bytesOf(await fs.readFile(url ?? where));
  }
  if (url) return fetch(url);
  throw new Error(`ctxgate: cannot read ${String(where)} in this runtime: pass the module (bytes or a WebAssembly.Module)`);
}

function bytesOf(b: Uint8Array): ArrayBuffer {
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
}
