// decision.ts: the decision JSON as the typed Decision. The module leaves
// warnings out when there are none (so such decisions keep their bytes);
// the typed API gives an empty list then, so callers need no presence check.

import type { Decision } from "./types.js";

const decoder = new TextDecoder();

/** The Decision the decision JSON bytes describe, warnings [] when absent. */
export function decisionOf(bytes: Uint8Array): Decision {
  const d = JSON.parse(decoder.decode(bytes)) as Decision;
  d.warnings ??= [];
  return d;
}
