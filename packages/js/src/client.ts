// client.ts: a client for `ctxgate serve` (docs/server.md): /v1/gate,
// /v1/validate, /v1/feedback, /v1/policy and /healthz over fetch, so it
// runs wherever fetch does. Errors are the same exceptions the in-process
// gate throws, carrying the server's code, field and status.

import { errorFromJSON, GateConnectionError, GateTimeoutError, CtxgateError } from "./errors.js";
import { decisionOf } from "./decision.js";
import type { Decider, Decision, GateRequest, GateResult, PolicyRef, Validation, ValidateInput } from "./types.js";

export interface ClientOptions {
  /** The server's base URL, e.g. http://127.0.0.1:8080 (a trailing slash is fine). */
  baseUrl: string | URL;
  /** Per-request timeout in milliseconds (default 10,000); 0 disables it. */
  timeoutMs?: number;
  /** Headers sent with every request (e.g. Authorization for a proxy in front). */
  headers?: Record<string, string>;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the client's timeout for this call. */
  timeoutMs?: number;
}

/** The decision headers (the same names the Envoy filter sets). */
export interface DecisionHeaders {
  action: string;
  level: string;
  /** The decision's confidence, with the decision's digits. */
  confidence: string;
  /** name@version */
  policy: string;
  /** "hard" for a refusal, else "". */
  refusal: string;
}

/** A decision from the server: the decision, its id and the exact bytes. */
export interface GateResponse extends GateResult {
  decision: Decision;
  /** The id the server remembers the decision by, for feedback and validate. */
  decisionId: string;
  /** The decision JSON as the server sent it (the module's bytes). */
  raw: Uint8Array;
  headers: DecisionHeaders;
}

export type Rating = "up" | "down";

export interface FeedbackResult {
  decision_id: string;
  /** This feedback's rating; null when it gave only a verdict. */
  rating: Rating | null;
  /** This feedback's calibration verdict (the answer was in the sources); null when it gave none. */
  answer_in_sources: boolean | null;
  /** Whether a knowledge-gap event was written (a first thumbs-down with a gap log configured). */
  gap_event: boolean;
  /** Whether it replaced an earlier rating or verdict for the decision. */
  replaced: boolean;
  /** Whether the server wrote it to its feedback log (serve --feedback-log). */
  recorded: boolean;
}

/** Options of a feedback call. */
export interface FeedbackOptions extends CallOptions {
  /** The verdict calibration learns from: true when the answer was in the sources. */
  answerInSources?: boolean;
}

export interface PolicyInfo {
  policy: PolicyRef;
  /** Where the policy came from (a file path, "built-in default", ...). */
  source: string;
  /** RFC 3339. */
  loaded_at: string;
  /** The policy document. */
  document: Record<string, unknown>;
}

export interface Health {
  status: "ok";
  policy: PolicyRef;
  module: string;
  pool: { size: number; live: number; in_use: number };
}

const decoder = new TextDecoder();

export class CtxgateClient implements Decider {
  readonly baseUrl: string;
  readonly #timeoutMs: number;
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof fetch;

  constructor(options: ClientOptions) {
    this.baseUrl = String(options.baseUrl).replace(/\/+$/, "");
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#headers = { ...options.headers };
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** POST /v1/gate: decides one request. */
  async gate(request: GateRequest | string | Uint8Array, options: CallOptions = {}): Promise<GateResponse> {
    const res = await this.#request("POST", "/v1/gate", request, {}, options);
    const h = res.headers;
    return {
      decision: decisionOf(res.body),
      decisionId: h.get("x-ctxgate-decision-id") ?? "",
      raw: res.body,
      headers: {
        action: h.get("x-ctxgate-action") ?? "",
        level: h.get("x-ctxgate-level") ?? "",
        confidence: h.get("x-ctxgate-confidence") ?? "",
        policy: h.get("x-ctxgate-policy") ?? "",
        refusal: h.get("x-ctxgate-refusal") ?? "",
      },
    };
  }

  /** The Decider interface: gate(). */
  decide(request: GateRequest): Promise<GateResponse> {
    return this.gate(request);
  }

  /**
   * POST /v1/validate: checks a model's answer. With the decision's id, a
   * soft refusal is logged as a knowledge gap of that decision.
   */
  async validate(input: ValidateInput, options: CallOptions & { decisionId?: string } = {}): Promise<Validation> {
    const headers: Record<string, string> = options.decisionId ? { "x-ctxgate-decision-id": options.decisionId } : {};
    const res = await this.#request("POST", "/v1/validate", input, headers, options);
    return JSON.parse(decoder.decode(res.body)) as Validation;
  }

  /**
   * POST /v1/feedback on a decision the server issued (NotFoundError otherwise): a thumbs up or down
   * (null for none), and/or `options.answerInSources`, the verdict `ctxgate calibrate` learns from.
   * A server with --feedback-token-file needs an `Authorization: Bearer` header (the client's headers).
   */
  async feedback(decisionId: string, rating: Rating | null, comment?: string, options: FeedbackOptions = {}): Promise<FeedbackResult> {
    const body: Record<string, string | boolean> = { decision_id: decisionId };
    if (rating !== null) body.rating = rating;
    if (options.answerInSources !== undefined) body.answer_in_sources = options.answerInSources;
    if (comment !== undefined) body.comment = comment;
    const res = await this.#request("POST", "/v1/feedback", body, {}, options);
    return JSON.parse(decoder.decode(res.body)) as FeedbackResult;
  }

  /** GET /v1/policy: the active policy. */
  async policy(options: CallOptions = {}): Promise<PolicyInfo> {
    const res = await this.#request("GET", "/v1/policy", undefined, {}, options);
    return JSON.parse(decoder.decode(res.body)) as PolicyInfo;
  }

  /** GET /healthz: the server's health (a CtxgateError when it answers 503). */
  async health(options: CallOptions = {}): Promise<Health> {
    const res = await this.#request("GET", "/healthz", undefined, {}, options);
    return JSON.parse(decoder.decode(res.body)) as Health;
  }

  async #request(method: string, path: string, body: unknown, headers: Record<string, string>, options: CallOptions): Promise<{ headers: Headers; body: Uint8Array }> {
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const ctl = new AbortController();
    let timedOut = false;
    const timer = timeoutMs > 0 ? setTimeout(() => {
      timedOut = true;
      ctl.abort();
    }, timeoutMs) : undefined;
    const onAbort = () => ctl.abort(options.signal?.reason);
    if (options.signal?.aborted) ctl.abort(options.signal.reason);
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    const init: RequestInit = { method, headers: { ...this.#headers, ...headers }, signal: ctl.signal };
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : body instanceof Uint8Array ? (body.slice() as Uint8Array<ArrayBuffer>) : JSON.stringify(body);
      (init.headers as Record<string, string>)["content-type"] = "application/json";
    }
    const url = this.baseUrl + path;
    try {
      let res: Response;
      try {
        res = await this.#fetch(url, init);
      } catch (err) {
        throw failure(err, timedOut, timeoutMs, method, url);
      }
      let bytes: Uint8Array;
      try {
        bytes = new Uint8Array(await res.arrayBuffer());
      } catch (err) {
        throw failure(err, timedOut, timeoutMs, method, url);
      }
      if (res.ok) return { headers: res.headers, body: bytes };
      const retry = res.headers.get("retry-after");
      const retryAfter = retry !== null && /^\d+$/.test(retry) ? Number(retry) : undefined;
      throw errorFromJSON(decoder.decode(bytes), res.status, retryAfter);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }
}

// failure turns a fetch failure into the package's exceptions: the client's
// own timeout, the caller's abort (rethrown as is), or no connection.
function failure(err: unknown, timedOut: boolean, timeoutMs: number, method: string, url: string): unknown {
  if (err instanceof CtxgateError) return err;
  if (timedOut) {
    return new GateTimeoutError({ code: "client_timeout", status: 0, message: `${method} ${url}: no answer within ${timeoutMs} ms`, cause: err });
  }
  if ((err as Error)?.name === "AbortError") return err;
  return new GateConnectionError({ code: "connection", status: 0, message: `${method} ${url}: ${String((err as Error)?.message ?? err)}`, cause: err });
}
