// @ctxgate/ctxgate: the gate in-process (Gate), the client of ctxgate serve
// (CtxgateClient), their errors and the request/decision types. The
// LangChain.js and LlamaIndex.TS components are the subpaths
// "@ctxgate/ctxgate/langchain" and "@ctxgate/ctxgate/llamaindex".

export { Gate, DEFAULT_MAX_INPUT_BYTES, type GateOptions, type Input } from "./gate.js";
export { loadModule, defaultModuleURL, type ModuleSource } from "./load.js";
export { PRESETS, presetNames, policyJSON, type PolicyInput, type PresetName } from "./policy.js";
export { CtxgateClient, type ClientOptions, type CallOptions, type DecisionHeaders, type GateResponse, type FeedbackResult, type FeedbackOptions, type Rating, type PolicyInfo, type Health } from "./client.js";
export * from "./errors.js";
export { decisionOf } from "./decision.js";
export { langchainScoreConvention, llamaindexScoreConvention, type ScoreConvention } from "./stores.js";
export type * from "./types.js";
