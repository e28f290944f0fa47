// server.ts: the gate as a Deno HTTP handler, the entry point for Deno
// Deploy (docs/edge.md). The same module and the same ctxgate.js as the
// Worker; the policy comes from the CTXGATE_POLICY environment variable
// (the JSON itself) or CTXGATE_POLICY_FILE, else the module's built-in
// default.
//
//   deno run --allow-read --allow-env --allow-net examples/deno/server.ts
//   curl -d @testdata/requests/default/inject.json localhost:8000/v1/gate
//
// CTXGATE_WASM overrides the module path; PORT the port (8000); HOST the
// address to listen on (Deno's default, all interfaces). A bad setting
// ends it with one line on stderr: exit 2 for a bad PORT or an argument,
// 1 for a file that cannot be read or a port that cannot be bound.
import createPlugin from "../node_modules/@extism/extism/dist/browser/mod.js";
import { errorJSON, Gate } from "../edge/ctxgate.js";

const MAX_BODY = 8 << 20;

// makeHandler instantiates the gate once; the handler shares it (Deno runs
// one request's JavaScript at a time and Gate serialises its calls).
export async function makeHandler(wasm: WebAssembly.Module, policyJSON: string) {
  const gate = await Gate.create(createPlugin, wasm, policyJSON);
  const json = { "content-type": "application/json" };
  return async (req: Request): Promise<Response> => {
    const { pathname } = new URL(req.url);
    if (pathname === "/healthz") return new Response("ok\n");
    if (pathname !== "/v1/gate" && pathname !== "/v1/validate") {
      return new Response(errorJSON("not_found", "no route " + pathname), { status: 404, headers: json });
    }
    if (req.method !== "POST") {
      return new Response(errorJSON("method_not_allowed", "use POST"), { status: 405, headers: { ...json, allow: "POST" } });
    }
    const body = new Uint8Array(await req.arrayBuffer());
    if (body.length > MAX_BODY) {
      return new Response(errorJSON("limit", `request body of ${body.length} bytes exceeds max_body_bytes ${MAX_BODY}`, "body"),
        { status: 413, headers: json });
    }
    const r = pathname === "/v1/gate" ? await gate.evaluate(body) : await gate.validate(body);
    return new Response(r.body, { status: r.ok ? 200 : r.status, headers: json });
  };
}

export async function loadWasm(): Promise<WebAssembly.Module> {
  const path = Deno.env.get("CTXGATE_WASM") ??
    new URL("../../host/wasm/ctxgate.wasm", import.meta.url).pathname;
  return new WebAssembly.Module(await readFile(path, "the module", " (make build writes it; CTXGATE_WASM overrides the path)"));
}

// ConfigError is a setting the operator must fix; code is the exit code.
class ConfigError extends Error {
  constructor(message: string, readonly code = 1) {
    super(message);
  }
}

async function readFile(path: string, what: string, hint = ""): Promise<Uint8Array> {
  try {
    return await Deno.readFile(path);
  } catch (err) {
    const why = err instanceof Deno.errors.NotFound ? "no such file"
      : err instanceof Deno.errors.PermissionDenied ? "permission denied"
      : err instanceof Deno.errors.IsADirectory ? "is a directory"
      : (err as Error).message;
    throw new ConfigError(`cannot read ${what} ${path}: ${why}${hint}`);
  }
}

async function main() {
  if (Deno.args.length > 0) {
    throw new ConfigError(`takes no arguments, got ${Deno.args[0]} (settings: CTXGATE_POLICY, CTXGATE_POLICY_FILE, CTXGATE_WASM, PORT, HOST)`, 2);
  }
  const portText = Deno.env.get("PORT") ?? "8000";
  const port = Number(portText);
  if (!/^[0-9]+$/.test(portText) || port > 65535) {
    throw new ConfigError(`PORT must be a port number (0-65535), got ${JSON.stringify(portText)}`, 2);
  }
  const file = Deno.env.get("CTXGATE_POLICY_FILE");
  const policy = Deno.env.get("CTXGATE_POLICY") ??
    (file ? new TextDecoder().decode(await readFile(file, "CTXGATE_POLICY_FILE")) : "");
  if (file && !policy.trim()) throw new ConfigError(`CTXGATE_POLICY_FILE ${file} is empty`);
  const handler = await makeHandler(await loadWasm(), policy);
  const hostname = Deno.env.get("HOST");
  try {
    Deno.serve({
      port,
      ...(hostname ? { hostname } : {}),
      onListen: ({ hostname, port }) => console.log(`server.ts: listening on http://${hostname}:${port}/`),
    }, handler);
  } catch (err) {
    throw new ConfigError(`cannot listen on ${hostname ?? "0.0.0.0"}:${port}: ${(err as Error).message}`);
  }
}

if (import.meta.main) {
  try {
    await main();
  } catch (err) {
    console.error(`server.ts: ${(err as Error).message}`);
    Deno.exit(err instanceof ConfigError ? err.code : 1);
  }
}
