# workerd.capnp: the package as a Worker, for workerd.test.mjs:
#   workerd serve test/runtime/workerd.capnp --socket-addr http=127.0.0.1:PORT
# The modules are the package's dist/ (npm run build) under the names its
# relative imports use, and the module it ships, as a compiled Wasm module.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "main", worker = .gate)],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "main")],
);

const gate :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "ctxgate.wasm", wasm = embed "../../ctxgate.wasm"),
    (name = "dist/index.js", esModule = embed "../../dist/index.js"),
    (name = "dist/client.js", esModule = embed "../../dist/client.js"),
    (name = "dist/decision.js", esModule = embed "../../dist/decision.js"),
    (name = "dist/errors.js", esModule = embed "../../dist/errors.js"),
    (name = "dist/gate.js", esModule = embed "../../dist/gate.js"),
    (name = "dist/kernel.js", esModule = embed "../../dist/kernel.js"),
    (name = "dist/load.js", esModule = embed "../../dist/load.js"),
    (name = "dist/policy.js", esModule = embed "../../dist/policy.js"),
    (name = "dist/presets.js", esModule = embed "../../dist/presets.js"),
    (name = "dist/stores.js", esModule = embed "../../dist/stores.js"),
    (name = "dist/types.js", esModule = embed "../../dist/types.js"),
    (name = "dist/wasi.js", esModule = embed "../../dist/wasi.js"),
  ],
  compatibilityDate = "2025-09-01",
);
