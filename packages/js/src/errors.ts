// errors.ts: the gate's error JSON ({"error":{"code","message","field"}})
// as exceptions. Every host writes that shape; the in-process gate and the
// client for `ctxgate serve` both throw these, so a caller catches one
// hierarchy wherever the gate runs.

import type { ErrorBody } from "./types.js";

/** HTTP status of each gate error code (docs/decision.md, docs/server.md). */
const STATUS: Record<string, number> = {
  bad_json: 400,
  bad_field: 422,
  bad_answer: 422,
  bad_policy: 422,
  limit: 413,
  timeout: 503,
  read_timeout: 408,
  upstream: 502,
  not_found: 404,
  no_upstream: 404,
  method_not_allowed: 405,
  internal: 500,
};

/** The HTTP status a host answers for a gate error code (500 when unknown). */
export function statusOf(code: string): number {
  return STATUS[code] ?? 500;
}

export interface CtxgateErrorInit {
  code: string;
  message: string;
  /** The request field the error is about ("" when none). */
  field?: string;
  /** The HTTP status (the server's, or what a server would answer; 0 when no answer came). */
  status?: number;
  /** Seconds, from a 503's Retry-After. */
  retryAfter?: number;
  /** The error JSON as the gate wrote it, when it wrote one. */
  body?: string;
  cause?: unknown;
}

/**
 * An error from the gate: `code` is the gate's error code (bad_json,
 * bad_field, limit, bad_policy, bad_answer, timeout, ...) and `field` the
 * path of the field it is about (`chunks[2].scores.vector`), "" when none.
 */
export class CtxgateError extends Error {
  readonly code: string;
  /** The gate's message alone (message adds the code and field in front). */
  readonly detail: string;
  readonly field: string;
  readonly status: number;
  readonly retryAfter?: number;
  readonly body?: string;

  constructor(init: CtxgateErrorInit) {
    super(init.field ? `${init.code}: ${init.field}: ${init.message}` : `${init.code}: ${init.message}`,
      init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = init.code;
    this.detail = init.message;
    this.field = init.field ?? "";
    this.status = init.status ?? statusOf(init.code);
    if (init.retryAfter !== undefined) this.retryAfter = init.retryAfter;
    if (init.body !== undefined) this.body = init.body;
  }

  /** The error JSON ({"error":{"code","message","field"}}), as every host writes it. */
  toJSON(): ErrorBody {
    return { error: { code: this.code, message: this.detail, field: this.field } };
  }
}

/** The request or answer is not what the gate accepts (bad_json, bad_field, bad_answer). */
export class BadRequestError extends CtxgateError {}
/** An input limit was exceeded (limit): too many chunks, too long a text, too large a body. */
export class LimitError extends CtxgateError {}
/** The policy is invalid, not verified, or not loaded (bad_policy). */
export class PolicyError extends CtxgateError {}
/** The gate's deadline passed (the server's 503 timeout), or the client's own timeout did. */
export class GateTimeoutError extends CtxgateError {}
/** An unknown path or decision id (not_found), or gateway mode is off (no_upstream). */
export class NotFoundError extends CtxgateError {}
/** The server could not be reached, or the connection failed before an answer. */
export class GateConnectionError extends CtxgateError {}
/** The Wasm module trapped (a bug, never bad input); the instance is replaced before the next call. */
export class ModuleTrapError extends CtxgateError {}

const CLASSES: Record<string, new (init: CtxgateErrorInit) => CtxgateError> = {
  bad_json: BadRequestError,
  bad_field: BadRequestError,
  bad_answer: BadRequestError,
  limit: LimitError,
  bad_policy: PolicyError,
  timeout: GateTimeoutError,
  read_timeout: GateTimeoutError,
  not_found: NotFoundError,
  no_upstream: NotFoundError,
};

/** The exception for one error code. */
export function errorFor(init: CtxgateErrorInit): CtxgateError {
  const C = CLASSES[init.code] ?? CtxgateError;
  return new C(init);
}

/** The error member of the gate's error JSON, or undefined when text is not that JSON. */
export function parseErrorJSON(text: string): ErrorBody["error"] | undefined {
  try {
    const v = JSON.parse(text) as Partial<ErrorBody> | null;
    if (v && typeof v === "object" && v.error && typeof v.error.code === "string") return v.error;
  } catch {
    // not JSON
  }
  return undefined;
}

/**
 * The exception for an error JSON text; a text that is not the error JSON
 * gives a CtxgateError with code "internal" carrying the text.
 */
export function errorFromJSON(text: string, status?: number, retryAfter?: number): CtxgateError {
  const e = parseErrorJSON(text);
  if (!e) {
    return new CtxgateError({ code: "internal", message: `not the gate's error JSON: ${text.slice(0, 200)}`, status: status ?? 500, body: text });
  }
  const init: CtxgateErrorInit = { code: e.code, message: String(e.message ?? ""), field: String(e.field ?? ""), body: text };
  if (status !== undefined) init.status = status;
  if (retryAfter !== undefined) init.retryAfter = retryAfter;
  return errorFor(init);
}
