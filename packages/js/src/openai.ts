// openai.ts: "@ctxgate/ctxgate/openai", the members ctxgate serve's
// OpenAI-compatible gateway adds to the official `openai` SDK's types
// (docs/server.md, "Gated requests"). Importing it once, anywhere in a
// program, lets `documents` (or `ctxgate`) through on chat.completions.create
// and responses.create, and types `sufficiency` on their answers and on a
// chat stream's final chunk:
//
//   import "@ctxgate/ctxgate/openai";
//
// Types only: the JavaScript module is empty. The SDK's own types are
// augmented (declaration merging), so every call site keeps the SDK's
// overloads; the gateway removes these members before the request goes
// upstream.
import type { Chunk, GateRequest, Level } from "./types.js";
// The modules augmented below, brought into the program (types only).
import type {} from "openai/resources/chat/completions/completions";
import type {} from "openai/resources/responses/responses";

/** One retrieved chunk in a gateway request's `documents`: the gate's Chunk. */
export type GatewayDocument = Chunk;

/**
 * The gate's request shape under `ctxgate`, instead of `documents` (not both):
 * chunks, and optionally query_embedding, now and the question (which is
 * otherwise the last user message).
 */
export type GatewayRequest = Partial<GateRequest>;

/** What a gated request may carry besides the SDK's own members. */
export interface GatewayParams {
  /** The retrieved chunks, at the server's documents_path (default "documents"). */
  documents?: GatewayDocument[];
  /** The gate's request shape, instead of documents. */
  ctxgate?: GatewayRequest;
}

/** The sufficient-context object on every gated answer: the decision in brief. */
export interface Sufficiency {
  /** The decision's confidence in [0,1]. */
  score: number;
  level: Level;
  /** The decision's confidence_factors, in words. */
  factors: string[];
}

/** What a gated answer carries besides the SDK's own members. */
export interface GatewayAnswer {
  /** Present on gated answers, local refusals and a chat stream's final chunk. */
  sufficiency?: Sufficiency;
}

declare module "openai/resources/chat/completions/completions" {
  interface ChatCompletionCreateParamsBase extends GatewayParams {}
  interface ChatCompletion extends GatewayAnswer {}
  interface ChatCompletionChunk extends GatewayAnswer {}
}

declare module "openai/resources/responses/responses" {
  interface ResponseCreateParamsBase extends GatewayParams {}
  interface Response extends GatewayAnswer {}
}
