// server.ts: the gate as a Deno HTTP handler, the entry point for Deno
// Deploy (docs/edge.md). The same module and the same ctxgate.js as the
// Worker; the policy comes from the CTXGATE_POLICY environment variable
// (the JSON itself) or CTXGATE_POLICY_FILE, else the module's built-in
// default.
//
//   deno run --allow-read --allow-env --allow-net examples/deno/server.ts
//   curl -d @testdata/requests/default/inject.json localhost:8000/v1/gate
//
// CTXGATE_WASM overrides the module path; PORT the port (8000).
// The SDK's browser build (a JavaScript WASI shim, the Worker's build): no
// file access, and faster per call than the Node build Deno would resolve
// for "@extism/extism" (docs/edge.md); check.ts checks both.
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
  return new WebAssembly.Module(await Deno.readFile(path));
}

if (import.meta.main) {
  const file = Deno.env.get("CTXGATE_POLICY_FILE");
  const policy = Deno.env.get("CTXGATE_POLICY") ?? (file ? await Deno.readTextFile(file) : "");
  const handler = await makeHandler(await loadWasm(), policy);
  Deno.serve({ port: Number(Deno.env.get("PORT") ?? 8000) }, handler);
}
