// timing.js: the per-call cost of evaluate on one golden request, measured
// in the host that runs it. Reported, never asserted: the machine is shared
// and noisy; compare runtimes from one run, not against a threshold.
import { Gate } from "./ctxgate.js";

const CASE = "default/inject";

// timeEvaluate returns one line: instantiation time, then microseconds per
// evaluate on a warm instance (including the SDK's per-call reset).
export async function timeEvaluate(now, gateFor, io, root, createPlugin, wasm) {
  const [policy, name] = CASE.split("/");
  const req = await io.readBytes(`${root}/testdata/requests/${policy}/${name}.json`);
  const policyJSON = await io.readText(`${root}/policies/${policy}.json`);

  let t0 = now();
  const fresh = await Gate.create(createPlugin, wasm, policyJSON);
  await fresh.evaluate(req); // the first call pays the guest's lazy policy load
  const instMs = now() - t0;
  await fresh.close();

  const gate = await gateFor(policy);
  for (let i = 0; i < 200; i++) await gate.evaluate(req);
  let n = 0;
  t0 = now();
  // Run for about a second (at most 20000 calls).
  while (n < 20000 && now() - t0 < 1000) {
    for (let i = 0; i < 100; i++) await gate.evaluate(req);
    n += 100;
  }
  const us = ((now() - t0) * 1000) / n;
  return `evaluate ${CASE} (${req.length} bytes): ${us.toFixed(1)} µs/call over ${n} calls; ` +
    `new instance + first call ${instMs.toFixed(1)} ms`;
}
