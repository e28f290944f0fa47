// worker.js: the package inside workerd (workerd.capnp; driven by
// workerd.test.mjs). A Worker may not compile Wasm from bytes, so the
// module is imported (a compiled WebAssembly.Module, as wrangler gives
// `import wasm from "@ctxgate/ctxgate/ctxgate.wasm"`) and passed in.
//
//   POST /evaluate?policy=NAME   the decision bytes, or the error JSON with
//   POST /validate?policy=NAME   the status the exception carries and its
//                                class in x-ctxgate-error-class
import wasm from "./ctxgate.wasm";
import { CtxgateError, Gate } from "./dist/index.js";

const gates = new Map();

async function gateFor(policy) {
  if (!gates.has(policy)) {
    const p = Gate.create({ module: wasm, policy });
    gates.set(policy, p);
    p.catch(() => gates.delete(policy));
  }
  return gates.get(policy);
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const policy = url.searchParams.get("policy") ?? "default";
    try {
      const gate = await gateFor(policy);
      const body = new Uint8Array(await request.arrayBuffer());
      switch (url.pathname) {
        case "/evaluate":
          return new Response(gate.evaluateBytes(body));
        case "/validate":
          return new Response(gate.validateBytes(body));
        case "/describe":
          return Response.json(gate.describe());
      }
      return new Response("not found", { status: 404 });
    } catch (err) {
      if (!(err instanceof CtxgateError)) throw err;
      const body = err.body ?? JSON.stringify(err);
      return new Response(body, { status: err.status, headers: { "x-ctxgate-error-class": err.name } });
    }
  },
};
