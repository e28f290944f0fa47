# config.capnp: ctxgate's edge function under workerd, one Worker per policy.
#
#   npx workerd serve examples/edge/config.capnp --socket-addr http=127.0.0.1:8787
#   curl -d @testdata/requests/default/inject.json localhost:8787/default/v1/gate
#
# A deployed Worker holds one policy (its POLICY binding: wrangler.toml);
# here each preset in policies/ gets its own Worker with the same code and
# module, and a small router picks one by the first path segment
# (/<policy>/v1/gate -> that Worker's /v1/gate). "default-upstream" is the
# default policy with a gateway upstream (testupstream.js, a stand-in for an
# LLM API that echoes what it received), for the gateway test; "builtin" has
# no POLICY binding and runs the module's built-in default policy.
#
# Paths are relative to this file: build the module first (make build).

using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .router),
    (name = "default", worker = .gateDefault),
    (name = "rag-confidence", worker = .gateRagConfidence),
    (name = "sufficient-context", worker = .gateSufficientContext),
    (name = "support-agent", worker = .gateSupportAgent),
    (name = "wikigr", worker = .gateWikigr),
    (name = "default-upstream", worker = .gateDefaultUpstream),
    (name = "builtin", worker = .gateBuiltin),
    (name = "upstream", worker = .testUpstream),
  ],
  sockets = [
    # The test overrides the address: --socket-addr http=127.0.0.1:PORT.
    (name = "http", address = "127.0.0.1:8787", http = (), service = "main"),
  ],
);

const compat :Text = "2025-09-01";

# The gate Worker's modules: the same files wrangler bundles.
const gateModules :List(Workerd.Worker.Module) = [
  (name = "worker.js", esModule = embed "worker.js"),
  (name = "ctxgate.js", esModule = embed "ctxgate.js"),
  (name = "gateway.js", esModule = embed "gateway.js"),
  # The gate itself, imported as a compiled WebAssembly.Module.
  (name = "ctxgate.wasm", wasm = embed "../../host/wasm/ctxgate.wasm"),
  # The Extism SDK's browser build: one self-contained ES module.
  (name = "@extism/extism", esModule = embed "../node_modules/@extism/extism/dist/browser/mod.js"),
];

const router :Workerd.Worker = (
  modules = [(name = "router.js", esModule = embed "router.js")],
  compatibilityDate = .compat,
  bindings = [
    (name = "default", service = "default"),
    (name = "rag-confidence", service = "rag-confidence"),
    (name = "sufficient-context", service = "sufficient-context"),
    (name = "support-agent", service = "support-agent"),
    (name = "wikigr", service = "wikigr"),
    (name = "default-upstream", service = "default-upstream"),
    (name = "builtin", service = "builtin"),
  ],
);

const gateDefault :Workerd.Worker = (
  modules = .gateModules,
  compatibilityDate = .compat,
  bindings = [
    (name = "POLICY", text = embed "../../policies/default.json"),
  ],
);

const gateRagConfidence :Workerd.Worker = (
  modules = .gateModules,
  compatibilityDate = .compat,
  bindings = [
    (name = "POLICY", text = embed "../../policies/rag-confidence.json"),
  ],
);

const gateSufficientContext :Workerd.Worker = (
  modules = .gateModules,
  compatibilityDate = .compat,
  bindings = [
    (name = "POLICY", text = embed "../../policies/sufficient-context.json"),
  ],
);

const gateSupportAgent :Workerd.Worker = (
  modules = .gateModules,
  compatibilityDate = .compat,
  bindings = [
    (name = "POLICY", text = embed "../../policies/support-agent.json"),
  ],
);

const gateWikigr :Workerd.Worker = (
  modules = .gateModules,
  compatibilityDate = .compat,
  bindings = [
    (name = "POLICY", text = embed "../../policies/wikigr.json"),
  ],
);

const gateDefaultUpstream :Workerd.Worker = (
  modules = .gateModules,
  compatibilityDate = .compat,
  bindings = [
    (name = "POLICY", text = embed "../../policies/default.json"),
    (name = "UPSTREAM", service = "upstream"),
    # Small, so the test can send an oversized body cheaply.
    (name = "MAX_BODY_BYTES", text = "65536"),
  ],
);

# No POLICY binding: the module's built-in default policy.
const gateBuiltin :Workerd.Worker = (
  modules = .gateModules,
  compatibilityDate = .compat,
);

const testUpstream :Workerd.Worker = (
  modules = [(name = "testupstream.js", esModule = embed "testupstream.js")],
  compatibilityDate = .compat,
);
