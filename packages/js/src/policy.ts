// policy.ts: choosing a policy by preset name, JSON text or object.

import { PRESETS, type PresetName } from "./presets.js";
import { PolicyError } from "./errors.js";

export { PRESETS, type PresetName };

/** A preset name, a policy (or signed bundle) as JSON text, or a policy object. */
export type PolicyInput = PresetName | string | Record<string, unknown>;

/** The names of the preset policies, as ctxgate serve --policy knows them. */
export const presetNames: readonly PresetName[] = Object.keys(PRESETS).sort() as PresetName[];

/**
 * policyJSON turns a PolicyInput into the text the module reads ("" for
 * the module's built-in default, which is the `default` preset). JSON text
 * is passed as is: the module validates it (and verifies a signed bundle).
 */
export function policyJSON(policy: PolicyInput | undefined): string {
  if (policy === undefined || policy === "") return "";
  if (typeof policy !== "string") return JSON.stringify(policy);
  if (Object.prototype.hasOwnProperty.call(PRESETS, policy)) return PRESETS[policy as PresetName];
  if (/^\s*\{/.test(policy)) return policy;
  throw new PolicyError({
    code: "bad_policy",
    field: "policy",
    message: `unknown preset ${JSON.stringify(policy)} (presets: ${presetNames.join(", ")}); or pass the policy's JSON`,
  });
}
